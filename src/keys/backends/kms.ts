/**
 * AWS KMS keys through @aws-sdk/client-kms: GetPublicKey once, then Sign with
 * `MessageType: 'DIGEST'` (the digest is made here, so only 32 or 48 bytes travel). The
 * SDK's standard configuration applies: AWS_REGION, the credential chain, AWS_ENDPOINT_URL.
 * Loaded only when a key file names a `kms` key.
 */
import { Buffer } from 'node:buffer';
import { type KeyObject, constants, createHash, createPublicKey, type JsonWebKey, verify } from 'node:crypto';
import type * as Kms from '@aws-sdk/client-kms';
import type { Algorithm } from '../../algorithms/names.js';
import { JwtGrpcError } from '../../base/errors.js';
import { kmsModule, requireOptional } from '../../base/optional-deps.js';
import type { BackendCallLimits, KeyBackend, OpenedKey } from '../backend.js';

/** KMS's name for each JWS algorithm, the digest it signs, the KeySpec `keys generate` asks for, and the JOSE size of an ECDSA signature. */
const KMS_ALGORITHMS: Partial<Record<Algorithm, { signing: string; hash: string; keySpec: string; joseSize?: number }>> = {
  ES256: { signing: 'ECDSA_SHA_256', hash: 'sha256', keySpec: 'ECC_NIST_P256', joseSize: 32 },
  ES384: { signing: 'ECDSA_SHA_384', hash: 'sha384', keySpec: 'ECC_NIST_P384', joseSize: 48 },
  RS256: { signing: 'RSASSA_PKCS1_V1_5_SHA_256', hash: 'sha256', keySpec: 'RSA_2048' },
  // KMS's PSS uses MGF1 with the same hash and a salt as long as the digest: PS256's parameters.
  PS256: { signing: 'RSASSA_PSS_SHA_256', hash: 'sha256', keySpec: 'RSA_2048' },
};

function kms(): typeof Kms {
  return requireOptional(kmsModule, '@aws-sdk/client-kms', 'a kms key') as unknown as typeof Kms;
}

/**
 * One client per process and deadline (in practice one: `keyBackendTimeoutMs`): each cluster
 * worker makes its own, with its own connections.
 */
const clients = new Map<number, Kms.KMSClient>();

/**
 * The client whose every request ends within `timeoutMs`: the connection (TCP and TLS) and
 * the request each get it, and a request past it is an error that destroys its socket
 * (`throwOnRequestTimeout`; without it the SDK only warns, and a KMS that accepts
 * connections and never answers keeps each socket, up to the agent's 50, for good).
 */
function kmsClient(timeoutMs: number): Kms.KMSClient {
  let found = clients.get(timeoutMs);
  if (found === undefined) {
    found = new (kms().KMSClient)({
      requestHandler: { connectionTimeout: timeoutMs, requestTimeout: timeoutMs, throwOnRequestTimeout: true },
    });
    clients.set(timeoutMs, found);
  }
  return found;
}

function spec(alg: Algorithm): NonNullable<(typeof KMS_ALGORITHMS)[Algorithm]> {
  const found = KMS_ALGORITHMS[alg];
  if (found === undefined)
    throw new JwtGrpcError('ERR_INVALID_KEY', `kms keys sign ES256, ES384, RS256 and PS256, not ${alg}`, { field: 'alg' });
  return found;
}

function backendError(ref: string, message: string, cause?: unknown): JwtGrpcError {
  return new JwtGrpcError('ERR_INVALID_KEY', `kms key ${ref}: ${message}`, { field: 'kms', cause });
}

/**
 * An ECDSA signature from DER (SEQUENCE of two INTEGERs, as KMS returns it) to JOSE's
 * r||s, each left-padded to `size` bytes. @internal
 *
 * @example
 * ```ts
 * const jose = derToJose(derSignature, 32); // 64 bytes for ES256
 * ```
 */
export function derToJose(der: Uint8Array, size: number): Buffer {
  const bytes = Buffer.from(der);
  let at = 0;
  const readLength = (): number => {
    const first = bytes[at++] as number;
    if (first < 0x80) return first;
    let length = 0;
    for (let count = first & 0x7f; count > 0; count -= 1) length = (length << 8) | (bytes[at++] as number);
    return length;
  };
  if (bytes[at++] !== 0x30) throw new JwtGrpcError('ERR_INVALID_KEY', 'ECDSA signature is not a DER SEQUENCE', { field: 'kms' });
  readLength();
  const out = Buffer.alloc(2 * size);
  for (const offset of [0, size]) {
    if (bytes[at++] !== 0x02) throw new JwtGrpcError('ERR_INVALID_KEY', 'ECDSA signature is not two DER INTEGERs', { field: 'kms' });
    const length = readLength();
    let value = bytes.subarray(at, at + length);
    at += length;
    while (value.length > size && value[0] === 0) value = value.subarray(1);
    if (value.length > size) throw new JwtGrpcError('ERR_INVALID_KEY', 'ECDSA signature integer is too long', { field: 'kms' });
    value.copy(out, offset + size - value.length);
  }
  return out;
}

/** What the PS256 probe signs: not a JWS signing input (it has spaces), so its signature is no token. */
const PSS_PROBE = Buffer.from('jwt-grpc PS256 salt length probe');

/**
 * PS256 is RSASSA-PSS with a salt as long as the digest, 32 bytes (RFC 7518 section 3.5),
 * and AWS KMS's RSASSA_PSS_SHA_256 signs so; local-kms signs with the longest salt the key
 * allows (Go's rsa.SignPSS with nil options), which no PS256 verifier accepts. One probe
 * signature at open tells them apart: a service that signs otherwise is refused here, with
 * the salt it used, rather than every token failing its self-check later.
 */
async function checkPssSalt(
  kmsApi: Kms.KMSClient,
  sdk: typeof Kms,
  ref: string,
  keyArn: string,
  publicKey: KeyObject,
  signal: AbortSignal,
): Promise<void> {
  const answer = await kmsApi
    .send(
      new sdk.SignCommand({
        KeyId: keyArn,
        Message: createHash('sha256').update(PSS_PROBE).digest(),
        MessageType: 'DIGEST',
        SigningAlgorithm: 'RSASSA_PSS_SHA_256',
      }),
      { abortSignal: signal },
    )
    .catch((err: unknown) => {
      throw backendError(ref, `the PS256 probe Sign failed: ${(err as Error).name}: ${(err as Error).message.split('\n')[0]}`, err);
    });
  const signature = Buffer.from(answer.Signature as Uint8Array);
  const verifies = (saltLength: number): boolean =>
    verify('sha256', PSS_PROBE, { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength }, signature);
  if (verifies(32)) return;
  const longest = Math.ceil(((publicKey.asymmetricKeyDetails?.modulusLength ?? 2048) - 1) / 8) - 32 - 2;
  const used = verifies(longest)
    ? `the longest salt (${longest} bytes)`
    : verifies(constants.RSA_PSS_SALTLEN_AUTO)
      ? 'a salt other than 32 bytes'
      : 'a signature that does not verify';
  throw backendError(
    ref,
    `signs RSASSA_PSS_SHA_256 with ${used}; PS256 needs a 32-byte salt (RFC 7518 section 3.5), as AWS KMS uses (local-kms does not)`,
  );
}

/**
 * Opens `ref`: GetPublicKey, within `limits`, pins the key ARN it answers (`KeyId`), and
 * every Sign names that ARN: an alias moved to another key later is never followed, and a
 * reopen (after a failure) uses the ARN too. Reloading the key file resolves the alias again,
 * and the key handle refuses one that now names a key whose public key is not the file's.
 */
async function open(ref: string, alg: Algorithm, limits: BackendCallLimits): Promise<OpenedKey> {
  const { signing, hash, joseSize } = spec(alg);
  const sdk = kms();
  const kmsApi = kmsClient(limits.timeoutMs);
  let publicJwk: JsonWebKey;
  let keyArn: string;
  try {
    const answer = await kmsApi.send(new sdk.GetPublicKeyCommand({ KeyId: ref }), { abortSignal: limits.signal });
    if (answer.KeyUsage !== 'SIGN_VERIFY') throw backendError(ref, `is a ${answer.KeyUsage ?? 'non-signing'} key, not SIGN_VERIFY`);
    if (!(answer.SigningAlgorithms ?? []).includes(signing as Kms.SigningAlgorithmSpec))
      throw backendError(ref, `does not sign with ${signing} (${alg})`);
    if (answer.KeyId === undefined || answer.KeyId === '') throw backendError(ref, 'GetPublicKey answered no KeyId (the key ARN) to pin');
    keyArn = answer.KeyId;
    const publicKey = createPublicKey({ key: Buffer.from(answer.PublicKey as Uint8Array), format: 'der', type: 'spki' });
    publicJwk = publicKey.export({ format: 'jwk' });
    if (alg === 'PS256') await checkPssSalt(kmsApi, sdk, ref, keyArn, publicKey, limits.signal);
  } catch (err) {
    if (err instanceof JwtGrpcError) throw err;
    throw backendError(ref, `GetPublicKey failed: ${(err as Error).name}: ${(err as Error).message.split('\n')[0]}`, err);
  }
  return {
    publicJwk,
    pinnedRef: keyArn,
    async sign(data, signal) {
      const digest = createHash(hash).update(data).digest();
      const answer = await kmsApi.send(
        new sdk.SignCommand({
          KeyId: keyArn,
          Message: digest,
          MessageType: 'DIGEST',
          SigningAlgorithm: signing as Kms.SigningAlgorithmSpec,
        }),
        { abortSignal: signal },
      );
      const signature = answer.Signature as Uint8Array;
      return joseSize === undefined ? Buffer.from(signature) : derToJose(signature, joseSize);
    },
    // The client is the process's, shared by every kms key: nothing of its own to release.
    async close() {},
  };
}

/** `keys generate --kms alias/NAME`: CreateKey (SIGN_VERIFY) and CreateAlias; the reference stored is the alias. */
async function generate(ref: string, alg: Algorithm, limits: BackendCallLimits): Promise<string> {
  if (!ref.startsWith('alias/')) throw backendError(ref, 'keys generate --kms takes alias/NAME, the alias the new key gets');
  const sdk = kms();
  const kmsApi = kmsClient(limits.timeoutMs);
  const created = await kmsApi.send(
    new sdk.CreateKeyCommand({
      KeySpec: spec(alg).keySpec as Kms.KeySpec,
      KeyUsage: 'SIGN_VERIFY',
      Description: `jwt-grpc ${alg} signing key`,
    }),
    { abortSignal: limits.signal },
  );
  await kmsApi.send(new sdk.CreateAliasCommand({ AliasName: ref, TargetKeyId: created.KeyMetadata?.KeyId }), {
    abortSignal: limits.signal,
  });
  return ref;
}

/**
 * The AWS KMS key backend: key file member `kms`, a key id, ARN or `alias/NAME`. @internal
 *
 * @example
 * ```ts
 * registerKeyBackend(kmsBackend);
 * ```
 */
export const kmsBackend: KeyBackend = { member: 'kms', packageName: '@aws-sdk/client-kms', open, generate };
