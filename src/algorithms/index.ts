/**
 * The algorithm table: each JWS algorithm jwt-grpc supports, resolved to what keys,
 * signers and verifiers need from node:crypto. One entry per algorithm, made by its
 * family's file, so hashes, curves and sizes are written once and agree everywhere.
 */
import { ecdsa } from './ecdsa.js';
import { eddsa } from './eddsa.js';
import { hmac } from './hmac.js';
import type { Algorithm } from './names.js';
import { rsa, rsaPss } from './rsa.js';
import type { AlgorithmSpec } from './spec.js';

export { ALGORITHMS, type Algorithm, isAlgorithm } from './names.js';
export type { AlgorithmSpec, CheckSignature, SignInput } from './spec.js';

export const ALGORITHM_SPECS: Readonly<Record<Algorithm, AlgorithmSpec>> = {
  HS256: hmac('sha256', 32),
  HS384: hmac('sha384', 48),
  HS512: hmac('sha512', 64),
  ES256: ecdsa('sha256', 'P-256'),
  ES384: ecdsa('sha384', 'P-384'),
  RS256: rsa('sha256'),
  PS256: rsaPss('sha256', 32),
  EdDSA: eddsa(),
};
