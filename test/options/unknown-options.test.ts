/**
 * No option is silently ignored: every export of the public API that takes an options
 * object refuses a misspelt name, at every level, with ERR_INVALID_OPTION naming its full
 * path and the name probably meant. The walk over every entry point of package.json
 * `exports` makes a new export, or a new entry point's, fail here until it is listed: in
 * CALLS, with a misspelt call per nesting level, or in NO_OPTIONS, with why.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as lib from '../../src/lib/index.js';
import { type KeySet, type JwtServer, JwtGrpcError, silentLogger } from '../../src/lib/index.js';
import { parseCommand } from '../../src/cli/args.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { ENTRY_POINTS } from '../package/entry-points.js';

let keys: KeySet;
let dir: string;
const servers: JwtServer[] = [];

beforeAll(async () => {
  keys = await lib.generateKeys({ algorithms: ['ES256', 'HS256'] });
  dir = mkdtempSync(join(tmpdir(), 'unknown-options-'));
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close({ graceMs: 0 })));
  rmSync(dir, { recursive: true, force: true });
});

/** A misspelt call, the field its refusal must name, and the name the hint must offer (absent when none is close). */
interface Misspelt {
  readonly field: string;
  readonly hint?: string;
  /** ERR_INVALID_OPTION unless said (a key file is keys, not options). */
  readonly code?: lib.JwtGrpcErrorCode;
  readonly call: () => unknown;
}

const any = (value: object): never => value as never;
const issuer: lib.JwksIssuer & lib.TokenIssuer & lib.TokenExchanger = {
  target: 'jwt.test:1',
  getJwks: () => Promise.resolve({ jwks_json: '{"keys":[]}' }),
  generateJwt: () => Promise.reject(new Error('not called')),
  exchangeToken: () => Promise.reject(new Error('not called')),
};
const jwk = (): Record<string, unknown> => ({ ...(lib.exportKeys(keys, { includePrivate: true }).keys[0] as object) });
const newServer = (): JwtServer => {
  const server = lib.createJwtServer({ keys, logger: silentLogger, health: false, reflection: false });
  servers.push(server);
  return server;
};
function keyFile(content: object): string {
  const file = join(dir, `keys-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(content), { mode: 0o600 });
  return file;
}

/** Every export that takes an options object: at least one misspelt call per nesting level. */
const CALLS: Readonly<Record<string, readonly Misspelt[]>> = {
  createStderrLogger: [{ field: 'levle', hint: 'level', call: () => lib.createStderrLogger(any({ levle: 'info' })) }],
  generateKeys: [{ field: 'algorithm', hint: 'algorithms', call: () => lib.generateKeys(any({ algorithm: ['ES256'] })) }],
  importKeys: [
    { field: 'kyes', hint: 'keys', code: 'ERR_INVALID_KEY', call: () => lib.importKeys({ keys: [jwk()], kyes: [] }) },
    {
      field: 'keys[0].deactivatedAt',
      hint: 'keys[0].deactivated_at',
      code: 'ERR_INVALID_KEY',
      call: () => lib.importKeys({ keys: [{ ...jwk(), deactivatedAt: '2026-01-01T00:00:00Z' }] }),
    },
  ],
  loadKeys: [
    { field: 'loger', hint: 'logger', call: () => lib.loadKeys(keyFile({ keys: [jwk()] }), any({ loger: silentLogger })) },
    {
      field: 'keys[0].pemfile',
      hint: 'keys[0].pemFile',
      code: 'ERR_INVALID_KEY',
      call: () => lib.loadKeys(keyFile({ keys: [{ kid: 'a', alg: 'ES256', pemfile: 'a.pem' }] }), { logger: silentLogger }),
    },
  ],
  exportKeys: [{ field: 'includePrivat', hint: 'includePrivate', call: () => lib.exportKeys(keys, any({ includePrivat: true })) }],
  createSigner: [
    { field: 'keyBackendTimeout', hint: 'keyBackendTimeoutMs', call: () => lib.createSigner(keys, any({ keyBackendTimeout: 500 })) },
  ],
  rotateKeyFile: [
    {
      field: 'loger',
      hint: 'logger',
      call: () => lib.rotateKeyFile(keyFile({ keys: [jwk()] }), { phase: 'activate', kid: 'a' }, any({ loger: silentLogger })),
    },
    { field: 'step.kd', hint: 'step.kid', call: () => lib.rotateKeyFile(keyFile({ keys: [jwk()] }), any({ phase: 'activate', kd: 'a' })) },
  ],
  createVerifier: [
    {
      field: 'maxTokenLenght',
      hint: 'maxTokenLength',
      call: () => lib.createVerifier(keys, any({ audience: 'api', maxTokenLenght: 100 })),
    },
    {
      field: 'cache.maxEntrys',
      hint: 'cache.maxEntries',
      call: () => lib.createVerifier(keys, any({ audience: 'api', cache: { maxEntrys: 10 } })),
    },
  ],
  addJwtService: [
    {
      field: 'isuer',
      hint: 'issuer',
      call: () => lib.addJwtService(new Server(), any({ keys, logger: silentLogger, isuer: 'https://a.example' })),
    },
    {
      field: 'verifyCache.maxEntrys',
      hint: 'verifyCache.maxEntries',
      call: () => lib.addJwtService(new Server(), any({ keys, logger: silentLogger, verifyCache: { maxEntrys: 1 } })),
    },
  ],
  createJwtServer: [
    { field: 'isuer', hint: 'issuer', call: () => lib.createJwtServer(any({ keys, isuer: 'https://a.example' })) },
    {
      field: 'verifyCache.maxEntrys',
      hint: 'verifyCache.maxEntries',
      call: () => lib.createJwtServer(any({ keys, verifyCache: { maxEntrys: 1 } })),
    },
    {
      field: 'tls.requireClientCertificat',
      hint: 'tls.requireClientCertificate',
      call: () => newServer().listen('127.0.0.1:0', any({ key: 'k', cert: 'c', requireClientCertificat: true })),
    },
    { field: 'graceMS', hint: 'graceMs', call: () => newServer().close(any({ graceMS: 0 })) },
  ],
  jwksHandler: [{ field: 'maxAge', call: () => lib.jwksHandler({ keys }, any({ maxAge: 60 })) }],
  checkPolicy: [
    {
      field: 'policy',
      hint: '$.callers["dns:a"].subjects',
      call: () => lib.checkPolicy({ callers: { 'dns:a': any({ subject: ['x'] }) } }),
    },
  ],
  checkTrust: [{ field: 'trustFile', hint: '$.self.audiences', call: () => lib.checkTrust({ self: any({ audience: ['orders'] }) }) }],
  runCluster: [
    { field: 'workrs', hint: 'workers', call: () => lib.runCluster(any({ address: '127.0.0.1:0', workrs: 1 })) },
    {
      field: 'server.isuer',
      hint: 'server.issuer',
      call: () => lib.runCluster(any({ address: '127.0.0.1:0', server: { isuer: 'https://a.example' } })),
    },
    {
      field: 'server.verifyCache.maxEntrys',
      hint: 'server.verifyCache.maxEntries',
      call: () => lib.runCluster(any({ address: '127.0.0.1:0', server: { verifyCache: { maxEntrys: 1 } } })),
    },
  ],
  createJwtClient: [{ field: 'deadlineMS', hint: 'deadlineMs', call: () => lib.createJwtClient('127.0.0.1:1', any({ deadlineMS: 5 })) }],
  jwtCallCredentials: [
    { field: 'audiance', hint: 'audience', call: () => lib.jwtCallCredentials(issuer, any({ algorithm: 'ES256', audiance: 'greeter' })) },
  ],
  onBehalfOf: [{ field: 'audiance', hint: 'audience', call: () => lib.onBehalfOf(issuer, any({ audiance: 'billing' })) }],
  createRemoteVerifier: [
    {
      field: 'isuer',
      hint: 'issuer',
      call: () => lib.createRemoteVerifier(issuer, any({ isuer: 'https://a.example', logger: silentLogger })),
    },
    {
      field: 'source.issuerURL',
      hint: 'source.issuerUrl',
      call: () => lib.createRemoteVerifier(any({ issuerURL: 'https://a.example' }), { audience: lib.ANY_AUDIENCE }),
    },
  ],
  jwtAuthInterceptor: [
    {
      field: 'audiance',
      hint: 'audience',
      call: () => lib.jwtAuthInterceptor(lib.createVerifier(keys, { audience: lib.ANY_AUDIENCE }), any({ audiance: 'greeter' })),
    },
    {
      field: 'methods["/a.B/C"].scope',
      hint: 'methods["/a.B/C"].scopes',
      call: () =>
        lib.jwtAuthInterceptor(lib.createVerifier(keys, { audience: lib.ANY_AUDIENCE }), any({ methods: { '/a.B/C': { scope: ['x'] } } })),
    },
  ],
};

/** Every other function or class export, and why it takes no options object to check. */
const NO_OPTIONS: Readonly<Record<string, string>> = {
  isAlgorithm: 'takes a value to test',
  KeySet: 'takes key entries made by the key functions, not options',
  mergeKeySets: 'takes two KeySets',
  setPkcs11ModuleDirs: 'takes a list of directories, each checked (absolute, no . or ..), not an options object',
  loadSubjects: 'takes a file name; the file is a JSON array of strings',
  CallMetadata: 'takes no arguments',
  CallKey: 'takes a description string',
  JwtGrpcError: 'an error is made on the way out of a failure: making one never throws, its options are typed only',
  GrpcStatusError: 'an error, as JwtGrpcError: making one never throws (test/transport/handler-api.test.ts)',
  loadPolicy: 'takes a file name; its content is checked as checkPolicy checks it (listed above)',
  loadTrust: 'takes a file name; its content is checked as checkTrust checks it (listed above)',
  parseNodeMaxProcs: 'takes a text',
  verifiedClaims: 'takes a call, read for its metadata only',
  optionalVerifiedClaims: 'takes a call, read for its metadata only',
};

/** The error a call throws or rejects with. */
async function failureOf(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (err) {
    return err;
  }
  return undefined;
}

/** Every function or class an entry point exports, by name. */
const exported: string[] = [];
for (const entry of ENTRY_POINTS) {
  const module = (await import(join(PACKAGE_ROOT, entry.source))) as Record<string, unknown>;
  exported.push(
    ...Object.entries(module)
      .filter(([, value]) => typeof value === 'function')
      .map(([name]) => name),
  );
}

describe('every export of the public API', () => {
  it('is read from every entry point', () => {
    expect(ENTRY_POINTS.length).toBeGreaterThan(1);
    expect(exported).toContain('createJwtServer');
    expect(exported).toContain('createRemoteVerifier');
  });

  it('that is a function or class is listed: as taking options (with misspelt calls) or as taking none, with why', () => {
    const unlisted = exported.filter((name) => !(name in CALLS) && !(name in NO_OPTIONS));
    expect(unlisted, 'list each new export in CALLS (misspelt calls, every nesting level) or in NO_OPTIONS (why)').toEqual([]);
    expect(
      Object.keys(CALLS).filter((name) => !exported.includes(name)),
      'CALLS names an export that is gone',
    ).toEqual([]);
    expect(
      Object.keys(NO_OPTIONS).filter((name) => !exported.includes(name)),
      'NO_OPTIONS names an export that is gone',
    ).toEqual([]);
  });

  const cases = Object.entries(CALLS).flatMap(([name, calls]) => calls.map((misspelt) => [name, misspelt.field, misspelt] as const));
  it.each(cases)('%s refuses the unknown option %s, naming it and the nearest known name', async (_name, field, misspelt) => {
    const err = await failureOf(misspelt.call);
    expect(err).toBeInstanceOf(JwtGrpcError);
    expect(err).toMatchObject({ code: misspelt.code ?? 'ERR_INVALID_OPTION', field });
    const message = (err as Error).message;
    if (field !== 'policy' && field !== 'trustFile') expect(message).toContain(`${field}: is not`);
    if (misspelt.hint === undefined) expect(message).not.toContain('did you mean');
    else expect(message).toContain(`did you mean ${misspelt.hint}?`);
  });

  it('without the misspelling, each call goes past the check (the refusal is of the name, not of the call)', async () => {
    // Spot checks that the names refused above are the only fault: the corrected options are taken.
    expect(() => lib.createVerifier(keys, { audience: 'greeter', maxTokenLength: 100, cache: { maxEntries: 10 } })).not.toThrow();
    expect(() =>
      lib.jwtAuthInterceptor(lib.createVerifier(keys, { audience: lib.ANY_AUDIENCE }), {
        audience: 'greeter',
        methods: { '/a.B/C': { scopes: ['x'] } },
      }),
    ).not.toThrow();
    expect(() =>
      lib.createRemoteVerifier(issuer, { audience: 'greeter', issuer: 'https://a.example', logger: silentLogger }),
    ).not.toThrow();
    expect(() => lib.jwtCallCredentials(issuer, { algorithm: 'ES256', audience: 'greeter' })).not.toThrow();
    expect(() => lib.createJwtClient('127.0.0.1:1', { deadlineMs: 5 }).close()).not.toThrow();
    expect(() =>
      lib.importKeys({ keys: [{ ...jwk(), deactivated_at: '2026-01-01T00:00:00Z', use: 'sig', key_ops: ['sign', 'verify'] }] }),
    ).not.toThrow();
    await expect(lib.loadKeys(keyFile({ keys: [jwk()] }), { logger: silentLogger })).resolves.toBeDefined();
  });
});

describe('jwt-grpc serve', () => {
  it('refuses a JWT_GRPC_ variable it does not read, naming it and the nearest one', () => {
    const err = (() => {
      try {
        parseCommand(['serve'], { JWT_GRPC_ISUER: 'https://a.example' });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(err).toMatchObject({ code: 'ERR_INVALID_OPTION', field: 'JWT_GRPC_ISUER' });
    expect((err as Error).message).toContain('did you mean JWT_GRPC_ISSUER?');
    expect(() => parseCommand(['serve'], { JWT_GRPC_FROBNICATE: '1' })).toThrow(
      /JWT_GRPC_FROBNICATE: is not an environment variable of jwt-grpc serve; jwt-grpc --help lists them/,
    );
  });

  it('takes the variables it reads, the worker number the primary sets, and any without the prefix', () => {
    expect(parseCommand(['serve'], { JWT_GRPC_ISSUER: 'https://a.example', JWT_GRPC_WORKER: '1', HOME: '/root' })).toMatchObject({
      kind: 'serve',
    });
  });
});

describe('a name Object.keys does not see', () => {
  const signed = (): string => {
    const now = Math.floor(Date.now() / 1000);
    return lib.createSigner(keys).sign('ES256', { sub: 'ada', aud: 'greeter', iat: now, exp: now + 60 }).token;
  };
  /** `audiance` given three ways a factory still reads it: inherited, by a getter, not enumerable. */
  const hidden = (known: object): Array<[string, object]> => [
    ['inherited', Object.create({ ...known, audiance: 'greeter' })],
    ['a getter', Object.defineProperty({ ...known }, 'audiance', { get: () => 'greeter', enumerable: true })],
    ['not enumerable', Object.defineProperty({ ...known }, 'audiance', { value: 'greeter', enumerable: false })],
  ];
  const refusal = (field: string) =>
    expect.objectContaining({
      code: 'ERR_INVALID_OPTION',
      field,
      message: expect.stringContaining(`did you mean ${field.replace('audiance', 'audience')}?`),
    });

  it.each(hidden({ audience: lib.ANY_AUDIENCE }))('is refused by a factory when %s', (_how, options) => {
    expect(() => lib.createVerifier(keys, options as never)).toThrow(refusal('audiance'));
    expect(() => lib.createRemoteVerifier(issuer, options as never)).toThrow(refusal('audiance'));
  });

  it.each(hidden({}))("is refused by a call's expect when %s, as by the factory", async (_how, expectations) => {
    const token = signed();
    expect(() => lib.createVerifier(keys, { audience: lib.ANY_AUDIENCE }).verify(token, expectations as never)).toThrow(
      refusal('expect.audiance'),
    );
    const remote = lib.createRemoteVerifier(issuer, { audience: lib.ANY_AUDIENCE, logger: silentLogger });
    await expect(remote.verify(token, expectations as never)).rejects.toMatchObject({
      code: 'ERR_INVALID_OPTION',
      field: 'expect.audiance',
    });
  });

  it('is taken when it is a known name: inherited, a getter, or on an instance of a class', () => {
    const token = signed();
    const verifier = lib.createVerifier(keys, Object.create({ audience: 'greeter' }));
    expect(verifier.verify(token)).toMatchObject({ valid: true });
    expect(verifier.verify(token, Object.defineProperty({}, 'audience', { get: () => 'other' }))).toMatchObject({
      reason: 'AUDIENCE_MISMATCH',
    });
    class Expectations {
      readonly audience = 'greeter';
    }
    expect(verifier.verify(token, new Expectations())).toMatchObject({ valid: true });
  });
});
