/**
 * PKCS#11 keys (an HSM, SoftHSM2, a cloud HSM's client library) through pkcs11js: a
 * maintained N-API binding (the one graphene-pk11 is built on) with asynchronous C_Sign,
 * which runs the token's work on libuv's thread pool, off the event loop. Loaded only when
 * a key file names a `pkcs11:` key.
 */
import { Buffer } from 'node:buffer';
import { createHash, createPublicKey, type JsonWebKey } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type * as Pkcs11 from 'pkcs11js';
import type { Algorithm } from '../../algorithms/names.js';
import { JwtGrpcError } from '../../base/errors.js';
import { pkcs11Module, requireOptional } from '../../base/optional-deps.js';
import { type BackendCallLimits, KEY_BACKEND_CONCURRENCY, type KeyBackend, type OpenedKey } from '../backend.js';
import { type Pkcs11Uri, describePkcs11Uri, parsePkcs11Uri } from './pkcs11-uri.js';
import { pkcs11ModuleProblem } from './pkcs11-custody.js';
import { secretFileRefusal } from '../../base/secret-file.js';

/** The environment variable that holds the PIN when the URI has no pin-source. */
export const PKCS11_PIN_ENV = 'JWT_GRPC_PKCS11_PIN';

/** The named curves PKCS#11 keys may be on, by their DER-encoded OID (CKA_EC_PARAMS). */
const CURVES: Record<string, { crv: string; params: Buffer; size: number }> = {
  ES256: { crv: 'P-256', params: Buffer.from('06082a8648ce3d030107', 'hex'), size: 32 },
  ES384: { crv: 'P-384', params: Buffer.from('06052b81040022', 'hex'), size: 48 },
};

function pkcs11(): typeof Pkcs11 {
  return requireOptional(pkcs11Module, 'pkcs11js', 'a pkcs11 key');
}

/** One loaded module (a .so) per path, initialised once per process: PKCS#11 allows one C_Initialize. */
const modules = new Map<string, Pkcs11.PKCS11>();

function loadModule(path: string): Pkcs11.PKCS11 {
  let module = modules.get(path);
  if (module !== undefined) return module;
  const lib = pkcs11();
  module = new lib.PKCS11();
  try {
    module.load(path);
    module.C_Initialize({ flags: lib.CKF_OS_LOCKING_OK });
  } catch (err) {
    if (!(err instanceof lib.Pkcs11Error && err.code === lib.CKR_CRYPTOKI_ALREADY_INITIALIZED)) throw err;
  }
  modules.set(path, module);
  return module;
}

function backendError(ref: string, message: string, cause?: unknown): JwtGrpcError {
  return new JwtGrpcError('ERR_INVALID_KEY', `pkcs11 key ${describePkcs11Uri(ref)}: ${message}`, { field: 'pkcs11', cause });
}

/**
 * The PIN: the pin-source file's first line, else JWT_GRPC_PKCS11_PIN; never from the command
 * line. The file is refused, not warned about, when group, others or another user could read
 * or replace it (secretFileRefusal): whoever reads it can use every key of the token.
 * A relative path is from the working directory here; loadKeys has made it relative to the key file.
 */
function readPin(uri: Pkcs11Uri, ref: string): string | undefined {
  if (uri.pinSource === undefined) return process.env[PKCS11_PIN_ENV];
  const file = uri.pinSource.slice('file:'.length);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    throw backendError(ref, `cannot read the pin-source file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    // The mode and owner of the file read, not of a name that could change between a check and the read.
    const problem = secretFileRefusal(fstatSync(fd));
    if (problem !== undefined) throw backendError(ref, `the pin-source file ${file} ${problem}`);
    return readFileSync(fd, 'utf8').split(/\r?\n/)[0];
  } finally {
    closeSync(fd);
  }
}

/** The slot whose token the URI names (token label, serial, slot-id). */
function findSlot(module: Pkcs11.PKCS11, uri: Pkcs11Uri, ref: string): Pkcs11.Handle {
  for (const slot of module.C_GetSlotList(true)) {
    if (uri.slotId !== undefined && slot.readUIntLE(0, Math.min(slot.length, 6)) !== uri.slotId) continue;
    const info = module.C_GetTokenInfo(slot);
    if (uri.token !== undefined && info.label.trimEnd() !== uri.token) continue;
    if (uri.serial !== undefined && info.serialNumber.trimEnd() !== uri.serial) continue;
    return slot;
  }
  throw backendError(ref, 'no token matches');
}

function openSession(module: Pkcs11.PKCS11, slot: Pkcs11.Handle, write = false): Pkcs11.Handle {
  const lib = pkcs11();
  return module.C_OpenSession(slot, lib.CKF_SERIAL_SESSION | (write ? lib.CKF_RW_SESSION : 0));
}

function login(module: Pkcs11.PKCS11, session: Pkcs11.Handle, pin: string | undefined, ref: string): void {
  if (pin === undefined) return;
  const lib = pkcs11();
  try {
    module.C_Login(session, lib.CKU_USER, pin);
  } catch (err) {
    if (err instanceof lib.Pkcs11Error && err.code === lib.CKR_USER_ALREADY_LOGGED_IN) return;
    const name = err instanceof lib.Pkcs11Error ? err.message.split(':')[0] : 'login failed';
    throw backendError(ref, `the token refused the PIN (${name})`, err);
  }
}

function findObject(module: Pkcs11.PKCS11, session: Pkcs11.Handle, uri: Pkcs11Uri, keyClass: number): Pkcs11.Handle | undefined {
  const lib = pkcs11();
  const template: Pkcs11.Template = [{ type: lib.CKA_CLASS, value: keyClass }];
  if (uri.object !== undefined) template.push({ type: lib.CKA_LABEL, value: uri.object });
  if (uri.id !== undefined) template.push({ type: lib.CKA_ID, value: uri.id });
  module.C_FindObjectsInit(session, template);
  try {
    const found = module.C_FindObjects(session, 2);
    return found.length === 1 ? found[0] : found.length === 0 ? undefined : Buffer.alloc(0);
  } finally {
    module.C_FindObjectsFinal(session);
  }
}

/** An EC point (CKA_EC_POINT: a DER OCTET STRING around 04||x||y, or the bare point) as JWK x and y. */
function ecPoint(value: Buffer, size: number): { x: string; y: string } {
  let point = value;
  if (point[0] === 0x04 && point.length === 2 * size + 1) {
    // The bare uncompressed point.
  } else if (point[0] === 0x04) {
    const lengthBytes = point[1]! & 0x80 ? point[1]! & 0x7f : 0;
    point = point.subarray(2 + lengthBytes);
  }
  if (point.length !== 2 * size + 1 || point[0] !== 0x04)
    throw new JwtGrpcError('ERR_INVALID_KEY', 'CKA_EC_POINT is not an uncompressed point', { field: 'pkcs11' });
  return { x: point.subarray(1, 1 + size).toString('base64url'), y: point.subarray(1 + size).toString('base64url') };
}

/** The public key, read from the token's public key object of the same label/id. */
function publicJwk(module: Pkcs11.PKCS11, session: Pkcs11.Handle, uri: Pkcs11Uri, alg: Algorithm, ref: string): JsonWebKey {
  const lib = pkcs11();
  const object = findObject(module, session, uri, lib.CKO_PUBLIC_KEY);
  if (object === undefined || object.length === 0)
    throw backendError(ref, 'no single public key object matches (needed for the public key)');
  const curve = CURVES[alg];
  if (curve !== undefined) {
    const [params, point] = module.C_GetAttributeValue(session, object, [{ type: lib.CKA_EC_PARAMS }, { type: lib.CKA_EC_POINT }]);
    if (!(params?.value as Buffer | undefined)?.equals(curve.params)) throw backendError(ref, `is not a ${curve.crv} key, as ${alg} needs`);
    return { kty: 'EC', crv: curve.crv, ...ecPoint(point?.value as Buffer, curve.size) };
  }
  const [modulus, exponent] = module.C_GetAttributeValue(session, object, [{ type: lib.CKA_MODULUS }, { type: lib.CKA_PUBLIC_EXPONENT }]);
  const jwk = {
    kty: 'RSA',
    n: stripZeros(modulus?.value as Buffer).toString('base64url'),
    e: stripZeros(exponent?.value as Buffer).toString('base64url'),
  };
  // Through node:crypto, so the members are canonical as the key file's are.
  return createPublicKey({ key: jwk, format: 'jwk' }).export({ format: 'jwk' });
}

function stripZeros(bytes: Buffer): Buffer {
  let at = 0;
  while (at < bytes.length - 1 && bytes[at] === 0) at += 1;
  return bytes.subarray(at);
}

/** What C_Sign gets for `alg`: the mechanism, and the data (ECDSA: the digest; RSA: the input, hashed by the token). */
function mechanismFor(alg: Algorithm): { mechanism: Pkcs11.Mechanism; input: (data: Buffer) => Buffer; length: number } {
  const lib = pkcs11();
  switch (alg) {
    case 'ES256':
      return { mechanism: { mechanism: lib.CKM_ECDSA }, input: (data) => createHash('sha256').update(data).digest(), length: 64 };
    case 'ES384':
      return { mechanism: { mechanism: lib.CKM_ECDSA }, input: (data) => createHash('sha384').update(data).digest(), length: 96 };
    case 'RS256':
      // The token adds the DigestInfo prefix (CKM_SHA256_RSA_PKCS).
      return { mechanism: { mechanism: lib.CKM_SHA256_RSA_PKCS }, input: (data) => data, length: 1024 };
    case 'PS256':
      return {
        mechanism: {
          mechanism: lib.CKM_SHA256_RSA_PKCS_PSS,
          parameter: { type: lib.CK_PARAMS_RSA_PSS, hashAlg: lib.CKM_SHA256, mgf: lib.CKG_MGF1_SHA256, saltLen: 32 } as Pkcs11.RsaPSS,
        },
        input: (data) => data,
        length: 1024,
      };
    default:
      throw new JwtGrpcError('ERR_INVALID_KEY', `pkcs11 keys sign ES256, ES384, RS256 and PS256, not ${alg}`, { field: 'alg' });
  }
}

/** Where a reference's token is, logged in once: the module, the slot, the PIN. */
function reach(ref: string): { uri: Pkcs11Uri; module: Pkcs11.PKCS11; slot: Pkcs11.Handle; pin: string | undefined } {
  const uri = parsePkcs11Uri(ref);
  if (uri.modulePath === undefined) throw backendError(ref, 'needs module-path=... (the PKCS#11 library) in its query');
  // A missing pkcs11js is said first, wherever the module is (pkcs11js is a dependency: trusted as code).
  pkcs11();
  // Both before the load: loading runs the module's code.
  const refused = pkcs11ModuleProblem(uri.modulePath);
  if (refused !== undefined) throw backendError(ref, refused);
  const pin = readPin(uri, ref);
  let module: Pkcs11.PKCS11;
  try {
    module = loadModule(uri.modulePath);
  } catch (err) {
    if (err instanceof JwtGrpcError) throw err;
    throw backendError(ref, `cannot load the module ${uri.modulePath}: ${(err as Error).message.split('\n')[0]}`, err);
  }
  return { uri, module, slot: findSlot(module, uri, ref), pin };
}

/**
 * Opens `ref`: a pool of sessions (one signature at a time each), the private key's handle,
 * the public key. What a deadline can do here: the calls that open (C_OpenSession, C_Login,
 * C_FindObjects, C_GetAttributeValue) are synchronous native calls on the main thread, which
 * nothing in JavaScript can interrupt (nor can a timer fire while they run, so the time
 * they took is measured, not awaited); once they return, a late open is closed and refused
 * rather than used. C_Sign runs on libuv's thread pool
 * (C_SignAsync): the key handle stops waiting for it at the deadline, but the token still
 * holds that session (and a pool thread) until it answers; see `sign` below.
 */
async function open(ref: string, alg: Algorithm, limits: BackendCallLimits): Promise<OpenedKey> {
  const started = performance.now();
  const { uri, module, slot, pin } = reach(ref);
  const lib = pkcs11();
  const { mechanism, input, length } = mechanismFor(alg);
  const idle: Pkcs11.Handle[] = [];
  const all: Pkcs11.Handle[] = [];
  const first = openSession(module, slot);
  all.push(first);
  let key: Pkcs11.Handle;
  let jwk: JsonWebKey;
  try {
    login(module, first, pin, ref);
    const found = findObject(module, first, uri, lib.CKO_PRIVATE_KEY);
    if (found === undefined) throw backendError(ref, 'no private key matches');
    if (found.length === 0) throw backendError(ref, 'more than one private key matches: add id= or a longer object=');
    key = found;
    jwk = publicJwk(module, first, uri, alg, ref);
    const tookMs = performance.now() - started;
    if (limits.signal.aborted || tookMs > limits.timeoutMs)
      throw backendError(
        ref,
        `the token took ${Math.round(tookMs)} ms to open the key, more than ${limits.timeoutMs} ms (option keyBackendTimeoutMs)`,
      );
  } catch (err) {
    module.C_CloseSession(first);
    throw err;
  }
  idle.push(first);
  return {
    publicJwk: jwk,
    async sign(data) {
      // A session runs one operation at a time: each signature takes one, opening more up to the handle's bound.
      const session = idle.pop() ?? (all.length < KEY_BACKEND_CONCURRENCY ? openSession(module, slot) : undefined);
      // Every session still busy with a C_SignAsync the handle stopped waiting for (past its
      // deadline): no more is started on a token that does not answer, which would also take
      // more of libuv's pool threads (shared with fs and dns) than the sessions already hold.
      if (session === undefined)
        throw backendError(ref, `all ${KEY_BACKEND_CONCURRENCY} sessions are still busy with signatures the token has not answered`);
      if (!all.includes(session)) all.push(session);
      let ok = false;
      try {
        module.C_SignInit(session, mechanism, key);
        const signature = await module.C_SignAsync(session, input(data), Buffer.alloc(length));
        ok = true;
        return Buffer.from(signature);
      } finally {
        // A session whose operation failed is closed, not reused: its state is the token's to say.
        if (ok) idle.push(session);
        else closeQuietly(module, session, all);
      }
    },
    async close() {
      for (const session of [...all]) closeQuietly(module, session, all);
    },
  };
}

function closeQuietly(module: Pkcs11.PKCS11, session: Pkcs11.Handle, all: Pkcs11.Handle[]): void {
  const at = all.indexOf(session);
  if (at >= 0) all.splice(at, 1);
  try {
    module.C_CloseSession(session);
  } catch {
    // Already closed by the token (a lost session): nothing to release.
  }
}

/** `keys generate --pkcs11 URI`: C_GenerateKeyPair on the token, the private key non-extractable and sensitive. */
async function generate(ref: string, alg: Algorithm): Promise<string> {
  const { uri, module, slot, pin } = reach(ref);
  const lib = pkcs11();
  if (uri.object === undefined) throw backendError(ref, 'needs object=LABEL to name the new key');
  const session = openSession(module, slot, true);
  try {
    login(module, session, pin, ref);
    if (findObject(module, session, uri, lib.CKO_PRIVATE_KEY) !== undefined)
      throw backendError(ref, 'a private key with that label already exists');
    const id = uri.id ?? createHash('sha256').update(uri.object).digest().subarray(0, 8);
    const common = [
      { type: lib.CKA_TOKEN, value: true },
      { type: lib.CKA_LABEL, value: uri.object },
      { type: lib.CKA_ID, value: id },
    ];
    const curve = CURVES[alg];
    const publicTemplate: Pkcs11.Template = [...common, { type: lib.CKA_VERIFY, value: true }];
    const privateTemplate: Pkcs11.Template = [
      ...common,
      { type: lib.CKA_SIGN, value: true },
      { type: lib.CKA_PRIVATE, value: true },
      { type: lib.CKA_SENSITIVE, value: true },
      { type: lib.CKA_EXTRACTABLE, value: false },
    ];
    if (curve !== undefined) {
      publicTemplate.push({ type: lib.CKA_EC_PARAMS, value: curve.params });
      module.C_GenerateKeyPair(session, { mechanism: lib.CKM_EC_KEY_PAIR_GEN }, publicTemplate, privateTemplate);
    } else {
      mechanismFor(alg);
      publicTemplate.push({ type: lib.CKA_MODULUS_BITS, value: 2048 }, { type: lib.CKA_PUBLIC_EXPONENT, value: Buffer.from([1, 0, 1]) });
      module.C_GenerateKeyPair(session, { mechanism: lib.CKM_RSA_PKCS_KEY_PAIR_GEN }, publicTemplate, privateTemplate);
    }
    return ref;
  } finally {
    module.C_CloseSession(session);
  }
}

/**
 * The PKCS#11 key backend: key file member `pkcs11`, an RFC 7512 URI. @internal
 *
 * @example
 * ```ts
 * registerKeyBackend(pkcs11Backend);
 * ```
 */
export const pkcs11Backend: KeyBackend = { member: 'pkcs11', packageName: 'pkcs11js', open, generate };
