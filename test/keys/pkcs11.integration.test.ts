/**
 * PKCS#11 keys against a real token (SoftHSM2, in a temporary token directory): made by
 * `keys generate --pkcs11`, served by `serve --keys` and createJwtServer on both
 * transports in ES256, ES384, RS256 and PS256 (checked by jose from the served JWK Set),
 * rotated in phases, a wrong PIN stopping the start in one line, and the proof that the
 * private scalar never enters a worker: not in its heap snapshot, not in any file written.
 */
import { readFileSync, readdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as jose from 'jose';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sleep, waitUntil } from '../../bench/kit/wait.js';
import { runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { type Algorithm, importKeys, loadKeys, silentLogger } from '../../src/lib.js';
import { KEY_BACKEND_UNAVAILABLE_MESSAGE, backendPublicJwk, generateHandleEntry } from '../../src/keys/backend.js';
import { registerBuiltinBackends } from '../../src/keys/backends/index.js';
import { writeKeyFile } from '../../src/keys/file.js';
import { status } from '@grpc/grpc-js';
import { ClientPool, callError } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, closeAllServers, startServer } from '../../bench/kit/jwt-servers.js';
import { type SoftToken, softToken, softhsmMissing } from '../../bench/kit/hsm.js';

const missing = softhsmMissing();
const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-pkcs11-'));
const token: SoftToken | undefined = missing === undefined ? softToken(join(dir, 'hsm')) : undefined;
const clients = new ClientPool();
afterEach(() => clients.closeAll());
afterAll(async () => {
  await closeAllServers(0);
  rmSync(dir, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCli(['keys', ...args], { env: { ...token?.env } });
}

describe.skipIf(missing !== undefined)(`PKCS#11 keys on SoftHSM2${missing === undefined ? '' : ` (skipped: ${missing})`}`, () => {
  const hsm = token as SoftToken;

  it('keys generate --pkcs11 makes the key inside the token and writes only its reference and public key', async () => {
    const file = join(dir, 'generated.json');
    const made = await cli('generate', '--alg', 'ES256', '--kid', 'hsm-es256', '--pkcs11', hsm.uri('cli-es256'), '--out', file);
    expect(made.code, made.stderr).toBe(0);
    const [entry] = (JSON.parse(readFileSync(file, 'utf8')) as { keys: Record<string, unknown>[] }).keys;
    expect(Object.keys(entry ?? {}).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'pkcs11', 'x', 'y']);
    // keys public prints what the token reports (loadKeys checks it against the cached members).
    const printed = await cli('public', '--keys', file);
    expect(JSON.parse(printed.stdout).keys[0]).toMatchObject({ kid: 'hsm-es256', x: entry?.['x'], y: entry?.['y'] });
    // Staged, then activated, as keys in memory are.
    const staged = await cli(
      'rotate',
      '--keys',
      file,
      '--alg',
      'ES256',
      '--kid',
      'hsm-es256-2',
      '--stage',
      '--pkcs11',
      hsm.uri('cli-es256-2'),
    );
    expect(staged.code, staged.stderr).toBe(0);
    const activated = await cli('rotate', '--keys', file, '--activate', 'hsm-es256-2');
    expect(activated.code, activated.stderr).toBe(0);
    const keys = await loadKeys(file, { logger: silentLogger });
    expect(keys.keys.map(({ kid, active }) => [kid, active])).toEqual([
      ['hsm-es256-2', true],
      ['hsm-es256', false],
    ]);
  });

  it('refuses a URI attribute it does not know, naming it, before touching the token', async () => {
    const file = join(dir, 'bad-uri.json');
    const made = await cli('generate', '--alg', 'ES256', '--pkcs11', `${hsm.uri('x')}&pin-vlaue=1`, '--out', file);
    expect(made.code).not.toBe(0);
    expect(made.stderr).toContain('unknown query attribute "pin-vlaue"');
  });

  it('a wrong PIN stops serve with one line naming the key, and never prints the PIN', async () => {
    const file = join(dir, 'wrong-pin.json');
    const made = await cli('generate', '--alg', 'ES256', '--kid', 'pin-key', '--pkcs11', hsm.uri('pin-key'), '--out', file);
    expect(made.code, made.stderr).toBe(0);
    const wrongPin = join(dir, 'wrong-pin.txt');
    writeFileSync(wrongPin, '999999\n', { mode: 0o600 });
    const entries = JSON.parse(readFileSync(file, 'utf8')) as { keys: Record<string, unknown>[] };
    entries.keys[0]!['pkcs11'] = String(entries.keys[0]!['pkcs11']).replace(hsm.pinFile, wrongPin);
    writeFileSync(file, JSON.stringify(entries), { mode: 0o600 });
    const served = await runCli(serveArgs('--keys', file), { env: { ...hsm.env } });
    expect(served.code).not.toBe(0);
    const lines = served.stderr
      .trim()
      .split('\n')
      .filter((line) => line.includes('pin-key'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/key pin-key: pkcs11 key pkcs11:token=jwt;object=pin-key: the token refused the PIN \(CKR_PIN_INCORRECT\)/);
    expect(served.stderr).not.toContain('999999');
  });

  describe.each(TRANSPORTS)('createJwtServer (%s)', (transport) => {
    const algorithms: Algorithm[] = ['ES256', 'ES384', 'RS256', 'PS256'];
    let file: string | undefined;

    async function keyFile(): Promise<string> {
      if (file !== undefined) return file;
      registerBuiltinBackends();
      const entries = [];
      for (const alg of algorithms)
        entries.push(await generateHandleEntry('pkcs11', hsm.uri(`lib-${alg}-${transport}`), alg, `lib-${alg}`, 5000));
      file = join(dir, `lib-${transport}.json`);
      await writeKeyFile(file, entries, { exclusive: true });
      return file;
    }

    it('signs ES256, ES384, RS256 and PS256 through the token; jose verifies them with the served JWK Set', async () => {
      const keys = await loadKeys(await keyFile(), { logger: silentLogger });
      const { port } = await startServer({ transport, keys });
      const client = clients.jwt(port);
      const jwks = jose.createLocalJWKSet(JSON.parse((await client.getJwks()).jwks_json));
      for (const alg of algorithms) {
        const issued = await client.generateJwt({ subject: 'ada', algorithm: alg });
        expect(issued.kid).toBe(`lib-${alg}`);
        const { protectedHeader, payload } = await jose.jwtVerify(issued.jwt, jwks, { algorithms: [alg] });
        expect([protectedHeader.alg, payload.sub]).toEqual([alg, 'ada']);
        expect((await client.verifyJwt({ jwt: issued.jwt })).valid).toBe(true);
      }
    });
  });

  it('recovers from a lost session without a restart: one call answers UNAVAILABLE, the next signs', async () => {
    registerBuiltinBackends();
    const recoverFile = join(dir, 'recover.json');
    await writeKeyFile(recoverFile, [await generateHandleEntry('pkcs11', hsm.uri('recover-es256'), 'ES256', 'recover', 5000)], {
      exclusive: true,
    });
    const keys = await loadKeys(recoverFile, { logger: silentLogger });
    const { port } = await startServer({ transport: 'http2', keys });
    const client = clients.jwt(port);
    expect((await client.generateJwt({ subject: 'ada', algorithm: 'ES256' })).kid).toBe('recover');
    // What a token reset or a restarted HSM daemon does: every session of this process is gone.
    const { module, slot } = ownModule();
    module.C_CloseAllSessions(slot);
    const lost = await callError(client.generateJwt({ subject: 'ada', algorithm: 'ES256' }));
    expect(lost).toMatchObject({ code: status.UNAVAILABLE, details: KEY_BACKEND_UNAVAILABLE_MESSAGE });
    expect((await client.generateJwt({ subject: 'ada', algorithm: 'ES256' })).kid).toBe('recover');
  });

  /** This process's own handle on SoftHSM2 (the same library state the backend uses) and the token's slot. */
  function ownModule(): { module: import('pkcs11js').PKCS11; slot: Buffer; pkcs11js: typeof import('pkcs11js') } {
    const pkcs11js = createRequire(import.meta.url)('pkcs11js') as typeof import('pkcs11js');
    const module = new pkcs11js.PKCS11();
    module.load('/usr/lib/softhsm/libsofthsm2.so');
    try {
      module.C_Initialize();
    } catch (err) {
      if (!(err instanceof pkcs11js.Pkcs11Error && err.code === pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED)) throw err;
    }
    const slot = module.C_GetSlotList(true).find((candidate) => module.C_GetTokenInfo(candidate).label.trimEnd() === 'jwt');
    return { module, slot: slot as Buffer, pkcs11js };
  }

  it('keeps the private scalar out of a cluster worker: not in its heap snapshot, not in any file written', async () => {
    // An extractable test key, made only here, so that the scalar can be read back to search for.
    const work = join(dir, 'heap');
    rmSync(work, { recursive: true, force: true });
    const { d } = extractableKey('heap-es256');
    registerBuiltinBackends();
    const ref = hsm.uri('heap-es256');
    const publicJwk = await backendPublicJwk('pkcs11', ref, 'ES256', 5000);
    const file = join(dir, 'heap-keys.json');
    await writeKeyFile(file, [{ kid: 'heap-es256', alg: 'ES256', pkcs11: ref, ...publicJwk }], { exclusive: true });
    importKeys(JSON.parse(readFileSync(file, 'utf8')));
    const cwd = mkdtempSync(join(tmpdir(), 'jwt-grpc-heap-'));
    try {
      const server = await startCli(serveArgs('--keys', file), {
        cwd,
        env: { ...hsm.env, NODEMAXPROCS: '2' },
        nodeArgs: ['--heapsnapshot-signal=SIGUSR2'],
      });
      const client = clients.jwt(server.port);
      for (let i = 0; i < 8; i += 1) expect((await client.generateJwt({ subject: 'ada', algorithm: 'ES256' })).kid).toBe('heap-es256');
      const worker = server.workerPids[0] as number;
      process.kill(worker, 'SIGUSR2');
      const snapshot = await waitForFile(cwd, /\.heapsnapshot$/, 20_000);
      const text = readFileSync(snapshot);
      // The search works: the public x coordinate (held as the JWK Set's text) is found.
      expect(text.includes(String(publicJwk.x))).toBe(true);
      for (const written of [snapshot, ...filesUnder(cwd), file]) {
        const content = readFileSync(written);
        for (const form of scalarForms(d)) expect(content.includes(form), `${written} holds the private scalar`).toBe(false);
      }
      server.signal('SIGTERM');
      await server.closed;
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 60_000);

  /** An ES256 key pair in the token whose private scalar may be read (CKA_EXTRACTABLE true, CKA_SENSITIVE false): for this test only. */
  function extractableKey(label: string): { d: Buffer } {
    const { module, slot, pkcs11js } = ownModule();
    const session = module.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
    try {
      try {
        module.C_Login(session, pkcs11js.CKU_USER, readFileSync(hsm.pinFile, 'utf8').trim());
      } catch (err) {
        if (!(err instanceof pkcs11js.Pkcs11Error && err.code === pkcs11js.CKR_USER_ALREADY_LOGGED_IN)) throw err;
      }
      const common = [
        { type: pkcs11js.CKA_TOKEN, value: true },
        { type: pkcs11js.CKA_LABEL, value: label },
      ];
      const { privateKey } = module.C_GenerateKeyPair(
        session,
        { mechanism: pkcs11js.CKM_EC_KEY_PAIR_GEN },
        [
          ...common,
          { type: pkcs11js.CKA_EC_PARAMS, value: Buffer.from('06082a8648ce3d030107', 'hex') },
          { type: pkcs11js.CKA_VERIFY, value: true },
        ],
        [
          ...common,
          { type: pkcs11js.CKA_SIGN, value: true },
          { type: pkcs11js.CKA_PRIVATE, value: true },
          { type: pkcs11js.CKA_SENSITIVE, value: false },
          { type: pkcs11js.CKA_EXTRACTABLE, value: true },
        ],
      );
      const [value] = module.C_GetAttributeValue(session, privateKey, [{ type: pkcs11js.CKA_VALUE }]);
      const d = Buffer.from(value?.value as Buffer);
      expect(d.length).toBeGreaterThanOrEqual(30);
      return { d };
    } finally {
      module.C_CloseSession(session);
    }
  }
});

/** Every encoding the scalar could take in memory or a file: raw, base64url, base64, hex. */
function scalarForms(d: Buffer): (Buffer | string)[] {
  const padded = Buffer.concat([Buffer.alloc(Math.max(0, 32 - d.length)), d]);
  return [padded, padded.toString('base64url'), padded.toString('base64'), padded.toString('hex'), padded.toString('hex').toUpperCase()];
}

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((name) => join(root, name))
    .filter((path) => statSync(path).isFile());
}

async function waitForFile(root: string, pattern: RegExp, timeoutMs: number): Promise<string> {
  let path: string | undefined;
  // Written when its size stops growing.
  const written = async (): Promise<boolean> => {
    const found = readdirSync(root).find((name) => pattern.test(name));
    if (found === undefined) return false;
    path = join(root, found);
    const size = statSync(path).size;
    await sleep(300);
    return size > 0 && statSync(path).size === size;
  };
  if (!(await waitUntil(written, timeoutMs, 100)) || path === undefined)
    throw new Error(`no file matching ${pattern} in ${root} within ${timeoutMs} ms`);
  return path;
}
