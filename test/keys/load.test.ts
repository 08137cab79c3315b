import { type KeyObject, generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import * as jose from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANY_AUDIENCE, JwtGrpcError, type Logger, createJwtServer, createSigner, createVerifier, loadKeys } from '../../src/lib/index.js';
import { expectValid, makeToken, nowSeconds } from '../tokens/helpers.js';

let dir: string;
let ec: { privateKey: KeyObject; publicKey: KeyObject };
let ed: { privateKey: KeyObject; publicKey: KeyObject };
const secret = randomBytes(32);

/** A logger that remembers what it was told. */
function capturingLogger(): Logger & { warnings: string[]; all: string[] } {
  const warnings: string[] = [];
  const all: string[] = [];
  return {
    warnings,
    all,
    info: (m) => void all.push(m),
    warn: (m) => {
      warnings.push(m);
      all.push(m);
    },
    error: (m) => void all.push(m),
  };
}

async function writePrivate(path: string, text: string, mode = 0o600): Promise<void> {
  await writeFile(path, text);
  await chmod(path, mode); // explicit: the umask must not decide
}

async function loadError(file: string, logger: Logger = capturingLogger()): Promise<JwtGrpcError> {
  try {
    await loadKeys(file, { logger });
  } catch (err) {
    expect(err).toBeInstanceOf(JwtGrpcError);
    return err as JwtGrpcError;
  }
  throw new Error(`loadKeys(${file}) did not throw`);
}

const claims = () => ({ sub: 'ada', exp: nowSeconds() + 300 });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'jwt-grpc-keys-'));
  ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  ed = generateKeyPairSync('ed25519');
  await mkdir(join(dir, 'pem'));
  await writePrivate(join(dir, 'pem', 'es.pem'), ec.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  await writePrivate(join(dir, 'pem', 'ed.pub.pem'), ed.publicKey.export({ type: 'spki', format: 'pem' }) as string, 0o644);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadKeys', () => {
  async function writeKeyFile(name: string, mode: number): Promise<string> {
    const file = join(dir, name);
    const content = {
      keys: [
        { kid: 'es-file', alg: 'ES256', pemFile: 'pem/es.pem' },
        { kid: 'ed-public', alg: 'EdDSA', pemFile: './pem/ed.pub.pem' },
        { kty: 'oct', k: secret.toString('base64url'), kid: 'hs-inline', alg: 'HS256' },
      ],
    };
    await writePrivate(file, JSON.stringify(content, null, 2), mode);
    return file;
  }

  it('reads a JWK Set whose pemFile entries are relative to the key file, not the working directory', async () => {
    const file = await writeKeyFile('keys.json', 0o600);
    expect(process.cwd()).not.toBe(dir);
    const keys = await loadKeys(file, { logger: capturingLogger() });
    expect(keys.keys).toEqual([
      { kid: 'es-file', alg: 'ES256', active: true, canSign: true },
      { kid: 'ed-public', alg: 'EdDSA', active: false, canSign: false },
      { kid: 'hs-inline', alg: 'HS256', active: true, canSign: true },
    ]);

    // The loaded PEM is the key we wrote: jose verifies with the original public key.
    const { token } = createSigner(keys).sign('ES256', claims());
    const pub = await jose.importJWK(ec.publicKey.export({ format: 'jwk' }) as jose.JWK, 'ES256');
    expect((await jose.jwtVerify(token, pub)).protectedHeader.kid).toBe('es-file');
    // The public PEM verifies tokens of its private key.
    const edToken = makeToken({ alg: 'EdDSA', kid: 'ed-public' }, claims(), 'EdDSA', ed.privateKey);
    expectValid(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(edToken));
    const hsToken = makeToken({ alg: 'HS256', kid: 'hs-inline' }, claims(), 'HS256', secret);
    expectValid(createVerifier(keys, { audience: ANY_AUDIENCE }).verify(hsToken));
  });

  it('a 0600 key file gives no warning; a 0644 one warns through the logger, naming the file', async () => {
    // The public PEM (0644) is not secret, but is read by the same path: point only at the private one here.
    const strictFile = join(dir, 'strict.json');
    await writePrivate(strictFile, JSON.stringify({ keys: [{ kid: 'es', alg: 'ES256', pemFile: 'pem/es.pem' }] }));
    const quiet = capturingLogger();
    await loadKeys(strictFile, { logger: quiet });
    expect(quiet.warnings).toEqual([]);

    const looseFile = join(dir, 'loose.json');
    await writePrivate(looseFile, JSON.stringify({ keys: [{ kid: 'es', alg: 'ES256', pemFile: 'pem/es.pem' }] }), 0o644);
    const loud = capturingLogger();
    await loadKeys(looseFile, { logger: loud });
    expect(loud.warnings).toHaveLength(1);
    expect(loud.warnings[0]).toContain(looseFile);
    expect(loud.warnings[0]).toContain('644');
  });

  it('a group- or world-readable PEM file warns too, and no warning carries key material', async () => {
    const loosePem = join(dir, 'pem', 'es-loose.pem');
    const pem = ec.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    await writePrivate(loosePem, pem, 0o640);
    const file = join(dir, 'loose-pem.json');
    await writePrivate(file, JSON.stringify({ keys: [{ kid: 'es', alg: 'ES256', pemFile: 'pem/es-loose.pem' }] }));
    const logger = capturingLogger();
    await loadKeys(file, { logger });
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]).toContain('es-loose.pem');
    const pemBody = pem.split('\n')[1] as string;
    for (const line of logger.all) expect(line).not.toContain(pemBody);
  });

  it('refuses a keyBackendTimeoutMs out of range before reading the file, in the words createJwtServer uses', async () => {
    for (const bad of [0, 60_001, 1.5, '500']) {
      const refused = loadKeys(join(dir, 'nope.json'), { keyBackendTimeoutMs: bad as number });
      await expect(refused).rejects.toMatchObject({
        code: 'ERR_INVALID_OPTION',
        field: 'keyBackendTimeoutMs',
        message: `option keyBackendTimeoutMs: must be an integer from 1 to 60000, got ${JSON.stringify(bad)}`,
      });
      expect(() => createJwtServer({ keyBackendTimeoutMs: bad as number })).toThrow(
        `option keyBackendTimeoutMs: must be an integer from 1 to 60000, got ${JSON.stringify(bad)}`,
      );
    }
  });

  it('a missing file is ERR_FILE naming the path', async () => {
    const missing = join(dir, 'nope.json');
    const err = await loadError(missing);
    expect(err.code).toBe('ERR_FILE');
    expect(err.message).toContain(missing);
  });

  it('a directory is ERR_FILE', async () => {
    expect((await loadError(dir)).code).toBe('ERR_FILE');
  });

  it.skipIf(process.getuid?.() === 0)('an unreadable file (mode 000) is ERR_FILE', async () => {
    const file = join(dir, 'locked.json');
    await writePrivate(file, JSON.stringify({ keys: [] }), 0o000);
    expect((await loadError(file)).code).toBe('ERR_FILE');
  });

  it('a missing pemFile is ERR_FILE naming the member, not its value', async () => {
    const file = join(dir, 'dangling.json');
    await writePrivate(file, JSON.stringify({ keys: [{ kid: 'es', alg: 'ES256', pemFile: 'pem/gone.pem' }] }));
    const err = await loadError(file);
    expect(err.code).toBe('ERR_FILE');
    expect(err.message).toBe(`cannot read the file ${file}: keys[0].pemFile names: ENOENT`);
  });

  it('a pemFile that is not a string is ERR_INVALID_KEY', async () => {
    const file = join(dir, 'pemfile-number.json');
    await writePrivate(file, JSON.stringify({ keys: [{ kid: 'es', alg: 'ES256', pemFile: 42 }] }));
    expect((await loadError(file)).code).toBe('ERR_INVALID_KEY');
  });

  it('invalid JSON is ERR_FILE whose message (and whole error) does not contain the file content', async () => {
    const fakeSecret = 'FAKE-SECRET-9b1d0c7e2f';
    const file = join(dir, 'broken.json');
    // Broken right after the secret, so a parser message quoting its context would include it.
    await writePrivate(file, `{"keys":[{"kty":"oct","kid":"x","alg":"HS256","k":"${fakeSecret}" "oops"}]}`);
    const err = await loadError(file);
    expect(err.code).toBe('ERR_FILE');
    expect(err.message).toContain(file);
    expect(err.message).not.toContain(fakeSecret);
    expect(inspect(err, { depth: 5 })).not.toContain(fakeSecret);
    expect(String(err.cause ?? '')).not.toContain(fakeSecret);
  });

  it('invalid JSON names the line and column where it goes wrong', async () => {
    const file = join(dir, 'comma.json');
    await writePrivate(file, '{\n  "keys": [\n    {"kty": "oct",}\n  ]\n}\n');
    expect((await loadError(file)).message).toBe(`key file ${file} is not valid JSON (line 3 column 19)`);
  });

  it('a truncated file says that it ends early, and where', async () => {
    const file = join(dir, 'truncated.json');
    await writePrivate(file, '{\n  "keys": [\n    {"kty": "oct", "k": "abc"');
    expect((await loadError(file)).message).toBe(`key file ${file} is not valid JSON (it ends early, at line 3 column 30)`);
  });

  it('a valid file with a bad key is ERR_INVALID_KEY (short HMAC secret)', async () => {
    const file = join(dir, 'short.json');
    await writePrivate(
      file,
      JSON.stringify({ keys: [{ kty: 'oct', k: randomBytes(16).toString('base64url'), kid: 'short', alg: 'HS256' }] }),
    );
    const err = await loadError(file);
    expect(err.code).toBe('ERR_INVALID_KEY');
    expect(err.message).toMatch(/^keys\[0\]: HS256 /);
  });
});
