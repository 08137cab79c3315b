import type { ClaimsSource } from '../claims.js';
import type { KeyMaterial, MicroKeys } from '../keys.js';
import type { BenchAlgorithm } from '../../options/algorithms.js';

/**
 * `exchange`: a token exchange (RFC 8693) of one of the issuer's own tokens, verify plus
 * sign, rowed against node:crypto's ES256 verify and sign of the same sizes (docs/token-exchange.md).
 */
export const OPERATIONS = ['sign', 'verify', 'sign+verify', 'exchange'] as const;
export type Operation = (typeof OPERATIONS)[number];

/** One call of the measured work; async for libraries built on WebCrypto (jose). */
export type OperationFn = () => unknown;

/** The measured operations of one library and algorithm, prepared once: the three of every JWT library, `exchange` where it has a meaning. */
export type PreparedOperations = Readonly<Partial<Record<Operation, OperationFn>>>;

/** What a library adapter gets to prepare its operations. */
export interface PrepareContext {
  readonly keys: MicroKeys;
  readonly key: KeyMaterial;
  readonly claims: ClaimsSource;
}

/** A JWT library under test. */
export interface MicroLibrary {
  readonly name: string;
  supports(alg: BenchAlgorithm): boolean;
  /** Makes signer/verifier/keys once; each returned function is one operation. */
  prepare(ctx: PrepareContext): Promise<PreparedOperations>;
}

/** Throws unless a verified payload carries the subject that was signed (the GenerateJwt check). */
export function checkSubject(library: string, expected: string, actual: unknown): void {
  if (actual !== expected) throw new Error(`${library}: verified sub ${JSON.stringify(actual)}, signed ${JSON.stringify(expected)}`);
}
