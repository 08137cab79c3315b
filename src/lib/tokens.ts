/**
 * `jwt-grpc/tokens`: sign and verify JSON Web Tokens in process, without a server:
 * {@link createSigner}, {@link createVerifier}, and the result a verification gives
 * ({@link VerifyResult}). The keys come from `jwt-grpc/keys`.
 *
 * Loads no server, transport or client.
 *
 * @example
 * ```ts
 * import { generateKeys } from 'jwt-grpc/keys';
 * import { createSigner, createVerifier } from 'jwt-grpc/tokens';
 *
 * const keys = await generateKeys({ algorithms: ['ES256'] });
 * const now = Math.floor(Date.now() / 1000);
 * const { token } = createSigner(keys).sign('ES256', { sub: 'ada', aud: 'api', exp: now + 60 });
 * console.log(createVerifier(keys, { audience: 'api' }).verify(token).valid); // true
 * ```
 * @packageDocumentation
 * @module jwt-grpc/tokens
 */
export { createSigner, type Signer, type SignedToken, type SignerOptions } from '../tokens/sign.js';
export { createVerifier, type Verifier, type VerifierOptions } from '../tokens/verify.js';
export { ANY_AUDIENCE, type AnyAudience, type ClaimExpectations } from '../tokens/claims.js';
export type { JwtPayload, VerifiedToken, VerifyFailure, VerifyFailureReason, VerifyResult } from '../tokens/result.js';
