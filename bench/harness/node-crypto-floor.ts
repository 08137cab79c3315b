/**
 * The second reading beside OpenSSL's floor (openssl-floor.ts): what node:crypto itself costs
 * for an ES256 call's sign and verify, measured by node-crypto-child.ts on the same core
 * right after each `openssl speed`. An ES256 GenerateJwt cannot cost less than this on Node,
 * whatever the server around it does, so the summary splits each distance to the floor into
 * node:crypto's share and the server's.
 */
import { Buffer } from 'node:buffer';
import { repoPath } from '../kit/paths.js';

/** The compiled child the probe runs (`npm run bench` builds it). */
export const NODE_CRYPTO_CHILD = repoPath('dist', 'bench', 'harness', 'node-crypto-child.js');

/** The first word of the child's one line of output. */
export const NODE_CRYPTO_LINE = 'node-crypto';

/** One reading of node:crypto: CPU µs per `crypto.sign` and per `crypto.verify` of P-256. */
export interface NodeCryptoReading {
  readonly signUs: number;
  readonly verifyUs: number;
}

/**
 * A signing input the size of jwt-grpc's ES256 tokens (`header.payload` of
 * `{alg, typ, kid}` and `{sub, iat, exp}`, 150-180 bytes): SHA-256 hashes it in as many
 * blocks as it hashes a real token's.
 */
export function signingInputOfTokenSize(): string {
  const segment = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = segment({ alg: 'ES256', typ: 'JWT', kid: 'es256-2026-11-28-0a1b2c3d' });
  const payload = segment({ sub: 'user0042@example.com', iat: 1_795_000_000, exp: 1_795_007_200 });
  return `${header}.${payload}`;
}

/** The child's line (`node-crypto sign 24.100 verify 63.250`), or null when it is not there or not positive. */
export function parseNodeCryptoLine(output: string): NodeCryptoReading | null {
  const found = new RegExp(`^${NODE_CRYPTO_LINE} sign ([\\d.]+) verify ([\\d.]+)\\s*$`, 'm').exec(output);
  if (found === null) return null;
  const signUs = Number(found[1]);
  const verifyUs = Number(found[2]);
  return signUs > 0 && verifyUs > 0 ? { signUs, verifyUs } : null;
}
