/**
 * PKCS#11 keys against a real token (SoftHSM2, in a temporary token directory): made by
 * `keys generate --pkcs11`, served by `serve --keys` and createJwtServer on both
 * transports in ES256, ES384, RS256 and PS256 (checked by jose from the served JWK Set),
 * rotated in phases, a wrong PIN stopping the start in one line, and the proof that the
 * private scalar never enters a worker: not in its heap snapshot, not in any file written.
 * Then custody: a module, key file or pin-source file that someone else could have written
 * is refused before any module is loaded (docs/keys.md, "Who may load a PKCS#11 module").
 */
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as jose from 'jose';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sleep, waitUntil } from '../../bench/kit/wait.js';
import { runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { type Algorithm, importKeys, loadKeys, setPkcs11ModuleDirs, silentLogger } from '../../src/lib/index.js';
import { PKCS11_MODULE_DIRS } from '../../src/keys/backends/pkcs11-custody.js';
import { KEY_BACKEND_UNAVAILABLE_MESSAGE, backendPublicJwk, generateHandleEntry } from '../../src/keys/backend.js';
import { registerBuiltinBackends } from '../../src/keys/backends/index.js';
import { type KeyFileEntry, writeKeyFile } from '../../src/keys/file.js';
import { status } from '@grpc/grpc-js';
import { ClientPool, callError } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, closeAllServers, startServer } from '../../bench/kit/jwt-servers.js';
import { PIN, SOFTHSM_MODULE, type SoftToken, softToken, softhsmMissing } from '../../bench/kit/hsm.js';

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

/** A key file naming `ref`, with a real public key (the module is refused before it could be asked for one). */
function handleKeyFile(file: string, ref: string, mode = 0o600): string {
  const publicJwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  writeFileSync(file, JSON.stringify({ keys: [{ kid: 'custody', alg: 'ES256', ...publicJwk, pkcs11: ref }] }));
  chmodSync(file, mode);
  return file;
}

/** Why loadKeys refused `file`: its code and message. */
async function loadRefusal(file: string): Promise<{ code: string; message: string }> {
  const refused = (await loadKeys(file, { logger: silentLogger }).then(
    () => undefined,
    (err: unknown) => err,
  )) as { code: string; message: string } | undefined;
  if (refused === undefined) throw new Error(`loadKeys accepted ${file}`);
  return { code: refused.code, message: refused.message };
}

/** A path that is not a shared object: loading it would fail with the loader's own error, so any other refusal came before the load. */
function notASharedObject(path: string): string {
  writeFileSync(path, 'not an ELF file\n', { mode: 0o644 });
  return path;
}

describe.skipIf(process.platform === 'win32')('PKCS#11 custody: refused before any module is loaded', () => {
  // Its real path: the refusals name the directories a module resolves to (macOS's /var is a link to /private/var).
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'jwt-grpc-pkcs11-custody-')));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  afterEach(() => setPkcs11ModuleDirs(PKCS11_MODULE_DIRS));
  const uri = (modulePath: string): string => `pkcs11:token=jwt;object=custody?module-path=${modulePath}`;

  it('refuses a relative module-path, and one with ..', async () => {
    for (const modulePath of ['softhsm/libsofthsm2.so', '/usr/lib/softhsm/../../../tmp/x.so']) {
      const refused = await loadRefusal(handleKeyFile(join(root, 'relative.json'), uri(modulePath)));
      expect(refused.code).toBe('ERR_INVALID_KEY');
      expect(refused.message).toBe(
        `key custody: pkcs11 key pkcs11:token=jwt;object=custody: module-path must be an absolute path without . or .. (got ${JSON.stringify(modulePath)})`,
      );
    }
  });

  it('refuses a module outside the allowed module directories, naming them', async () => {
    const module = notASharedObject(join(root, 'outside.so'));
    const refused = await loadRefusal(handleKeyFile(join(root, 'outside.json'), uri(module)));
    expect(refused.message).toBe(
      `key custody: pkcs11 key pkcs11:token=jwt;object=custody: the module ${module} is outside the allowed module directories (${PKCS11_MODULE_DIRS.join(', ')}; --pkcs11-module-dirs)`,
    );
  });

  it('refuses a module in an allowed directory that others may write, before loading it', async () => {
    const allowed = join(root, 'allowed');
    const open = join(allowed, 'open');
    mkdirSync(open, { recursive: true, mode: 0o700 });
    chmodSync(allowed, 0o700);
    chmodSync(open, 0o777);
    setPkcs11ModuleDirs([allowed]);
    const module = notASharedObject(join(open, 'libjunk.so'));
    const refused = await loadRefusal(handleKeyFile(join(root, 'open.json'), uri(module)));
    expect(refused.message).toBe(
      `key custody: pkcs11 key pkcs11:token=jwt;object=custody: refused the module ${module}: ${open} is writable by group or others (mode 777), so someone else could have replaced it`,
    );
    expect(refused.message).not.toContain('cannot load the module');
  });

  it('refuses a module that is itself group-writable, and a link into a directory others may write', async () => {
    const allowed = join(root, 'links');
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(allowed, { mode: 0o700 });
    mkdirSync(elsewhere, { mode: 0o700 });
    chmodSync(elsewhere, 0o777);
    setPkcs11ModuleDirs([allowed]);
    const writable = notASharedObject(join(allowed, 'libwritable.so'));
    chmodSync(writable, 0o664);
    expect((await loadRefusal(handleKeyFile(join(root, 'writable.json'), uri(writable)))).message).toContain(
      `refused the module ${writable}: ${writable} is writable by group or others (mode 664)`,
    );
    // The link and its directory pass; what it points to does not.
    const link = join(allowed, 'liblinked.so');
    symlinkSync(notASharedObject(join(elsewhere, 'libtarget.so')), link);
    expect((await loadRefusal(handleKeyFile(join(root, 'linked.json'), uri(link)))).message).toContain(
      `refused the module ${link}: ${elsewhere} is writable by group or others (mode 777)`,
    );
  });

  it('refuses a key file naming a module that group or others may write, however the member is spelt; warns only for one that names none', async () => {
    const file = handleKeyFile(join(root, 'group-writable.json'), uri(SOFTHSM_MODULE), 0o620);
    const refused = await loadRefusal(file);
    expect(refused).toEqual({
      code: 'ERR_FILE',
      message: `key file ${file} is writable by group or others (mode 620): chmod 600 it; refused, as it names code this process would load (a PKCS#11 module)`,
    });
    // JSON.parse reads "pkcs\u0031\u0031" as "pkcs11": so does the check.
    writeFileSync(file, readFileSync(file, 'utf8').replace('"pkcs11"', '"pkcs\\u0031\\u0031"'));
    expect((await loadRefusal(file)).code).toBe('ERR_FILE');
    const inMemory = join(root, 'in-memory.json');
    const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
    writeFileSync(inMemory, JSON.stringify({ keys: [{ kid: 'memory', alg: 'ES256', ...jwk }] }));
    chmodSync(inMemory, 0o620);
    const warned: string[] = [];
    const keys = await loadKeys(inMemory, { logger: { ...silentLogger, warn: (line: string) => void warned.push(line) } });
    expect(keys.keys.map(({ kid }) => kid)).toEqual(['memory']);
    expect(warned).toEqual([`key file ${inMemory} is writable by group or others (mode 620): chmod 600 it`]);
  });

  it('keys public, keys rotate and serve refuse a group-writable key file naming a module, in one line, exit 1', async () => {
    const file = handleKeyFile(join(root, 'cli-group-writable.json'), uri(SOFTHSM_MODULE), 0o660);
    const line = `key file ${file} is readable by group or others (mode 660): chmod 600 it; refused, as it names code this process would load (a PKCS#11 module)`;
    for (const argv of [
      ['keys', 'public', '--keys', file],
      ['keys', 'rotate', '--keys', file, '--alg', 'ES256', '--stage'],
      serveArgs('--keys', file),
    ]) {
      const run = await runCli(argv);
      expect(run.code, argv.join(' ')).toBe(1);
      expect(run.stderr, argv.join(' ')).toContain(line);
      expect(run.stdout).not.toContain('listening');
    }
    // Nothing rewrote it.
    expect(statSync(file).mode & 0o777).toBe(0o660);
  });

  it('setPkcs11ModuleDirs refuses a directory that is not absolute, naming the option, and keeps the ones set before', async () => {
    setPkcs11ModuleDirs(['/opt/hsm/lib']);
    for (const dirs of [['lib/softhsm'], ['/opt/hsm/lib/'], []]) {
      expect(() => setPkcs11ModuleDirs(dirs)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION', field: 'pkcs11ModuleDirs' }));
    }
    const refused = await loadRefusal(handleKeyFile(join(root, 'kept-dirs.json'), uri(SOFTHSM_MODULE)));
    expect(refused.message).toContain('is outside the allowed module directories (/opt/hsm/lib; --pkcs11-module-dirs)');
  });

  it('serve --pkcs11-module-dirs, and its variable, are the directories a module may be loaded from', async () => {
    const file = handleKeyFile(join(root, 'cli-dirs.json'), uri(SOFTHSM_MODULE));
    const byFlag = await runCli(serveArgs('--keys', file, '--pkcs11-module-dirs', '/opt/hsm/lib'));
    expect(byFlag.code).toBe(1);
    expect(byFlag.stderr).toContain(
      `the module ${SOFTHSM_MODULE} is outside the allowed module directories (/opt/hsm/lib; --pkcs11-module-dirs)`,
    );
    const byVariable = await runCli(['keys', 'public', '--keys', file], { env: { JWT_GRPC_PKCS11_MODULE_DIRS: '/opt/a:/opt/b' } });
    expect(byVariable.code).toBe(1);
    expect(byVariable.stderr).toContain('is outside the allowed module directories (/opt/a, /opt/b; --pkcs11-module-dirs)');
    const bad = await runCli(serveArgs('--keys', file, '--pkcs11-module-dirs', 'relative/lib'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('option --pkcs11-module-dirs: entry 0 must be an absolute directory');
  });
});

describe.skipIf(missing !== undefined || process.platform === 'win32')(
  `PKCS#11 custody on SoftHSM2${missing === undefined ? '' : ` (skipped: ${missing})`}`,
  () => {
    const hsm = token as SoftToken;
    afterEach(() => setPkcs11ModuleDirs(PKCS11_MODULE_DIRS));

    /** A key made in the token under `label`, and its key file entry with the URI `refOf` gives. */
    async function madeKey(label: string, refOf: (ref: string) => string): Promise<KeyFileEntry> {
      registerBuiltinBackends();
      const entry = await generateHandleEntry('pkcs11', hsm.uri(label), 'ES256', label, 5000);
      return { ...entry, pkcs11: refOf(String(entry['pkcs11'])) };
    }

    it('refuses a copy of the real module in a directory others may write: it would load, and is not loaded', async () => {
      const allowed = realpathSync(mkdtempSync(join(dir, 'modules-')));
      const open = join(allowed, 'open');
      mkdirSync(open);
      chmodSync(open, 0o777);
      const copy = join(open, 'libsofthsm2.so');
      copyFileSync(SOFTHSM_MODULE, copy);
      const file = join(dir, 'copied-module.json');
      await writeKeyFile(file, [await madeKey('copied-module', (ref) => ref.replace(SOFTHSM_MODULE, copy))], { exclusive: true });
      setPkcs11ModuleDirs([allowed]);
      const refused = await loadRefusal(file);
      expect(refused.message).toContain(`refused the module ${copy}: ${open} is writable by group or others (mode 777)`);
      // The copy is a module the loader takes (pkcs11js loads it here, without the check): the refusal was custody, not the file.
      const pkcs11js = createRequire(import.meta.url)('pkcs11js') as typeof import('pkcs11js');
      const direct = new pkcs11js.PKCS11();
      direct.load(copy);
      direct.close();
    });

    it('refuses a pin-source file that group or others may read, without the PIN in the message', async () => {
      const pinFile = join(dir, 'shared-pin.txt');
      writeFileSync(pinFile, `${PIN}\n`);
      chmodSync(pinFile, 0o640);
      const file = join(dir, 'shared-pin.json');
      await writeKeyFile(file, [await madeKey('shared-pin', (ref) => ref.replace(hsm.pinFile, pinFile))], { exclusive: true });
      const refused = await loadRefusal(file);
      expect(refused.message).toBe(
        `key shared-pin: pkcs11 key pkcs11:token=jwt;object=shared-pin: the pin-source file ${pinFile} is readable by group or others (mode 640): chmod 600 it`,
      );
      expect(refused.message).not.toContain(PIN);
      chmodSync(pinFile, 0o600);
      expect((await loadKeys(file, { logger: silentLogger })).keys).toHaveLength(1);
    });

    it('reads a relative pin-source from the key file directory, not the working directory', async () => {
      const keyDir = mkdtempSync(join(dir, 'relative-pin-'));
      writeFileSync(join(keyDir, 'pin.txt'), `${PIN}\n`, { mode: 0o600 });
      const file = join(keyDir, 'keys.json');
      // Made from another directory: the URI means the same file when made as when served.
      const ref = hsm.uri('relative-pin').replace(`file:${hsm.pinFile}`, 'file:pin.txt');
      const made = await runCli(['keys', 'generate', '--alg', 'ES256', '--kid', 'relative-pin', '--pkcs11', ref, '--out', file], {
        cwd: dir,
        env: { ...hsm.env },
      });
      expect(made.code, made.stderr).toBe(0);
      expect(readFileSync(file, 'utf8')).toContain('pin-source=file:pin.txt');
      // Served from another directory: the server (and each worker) reads keyDir/pin.txt.
      const server = await startCli(serveArgs('--keys', file), { cwd: dir, env: { ...hsm.env, NODEMAXPROCS: '2' } });
      try {
        const client = clients.jwt(server.port);
        for (let i = 0; i < 4; i += 1) expect((await client.generateJwt({ subject: 'ada', algorithm: 'ES256' })).kid).toBe('relative-pin');
      } finally {
        server.signal('SIGTERM');
        await server.closed;
      }
      // Moved away from its pin file, the same key file is refused, naming the path it resolved.
      const moved = join(dir, 'relative-pin-moved.json');
      writeFileSync(moved, readFileSync(file), { mode: 0o600 });
      expect((await loadRefusal(moved)).message).toContain(`cannot read the pin-source file ${join(dir, 'pin.txt')}: ENOENT`);
    }, 30_000);

    it('serve reads the PIN from JWT_GRPC_PKCS11_PIN when the URI has no pin-source, and signs', async () => {
      const file = join(dir, 'pin-env.json');
      await writeKeyFile(file, [await madeKey('pin-env', (ref) => ref.replace(`&pin-source=file:${hsm.pinFile}`, ''))], {
        exclusive: true,
      });
      expect(readFileSync(file, 'utf8')).not.toContain('pin-source');
      const server = await startCli(serveArgs('--keys', file), { env: { ...hsm.env, JWT_GRPC_PKCS11_PIN: PIN } });
      try {
        const issued = await clients.jwt(server.port).generateJwt({ subject: 'ada', algorithm: 'ES256' });
        expect(issued.kid).toBe('pin-env');
      } finally {
        server.signal('SIGTERM');
        await server.closed;
      }
      expect(server.stderr).not.toContain(PIN);
    }, 30_000);
  },
);
