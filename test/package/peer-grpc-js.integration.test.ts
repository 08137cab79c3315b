/**
 * @grpc/grpc-js is a peer dependency: an app brings its own, and the package uses that one
 * copy. The packed package is installed beside the lowest and the newest grpc-js of the
 * peer range, type-checked (strict, skipLibCheck false) and run: a protected grpc-js server
 * refuses a call without a token and serves one with. Then grpc-js 1.9 (no server
 * interceptors) is forced in: jwtAuthInterceptor refuses it by name, and a handler that
 * reads verifiedClaims still fails the call without a token (fails closed).
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INSTALL_TIMEOUT_MS, PACK_TIMEOUT_MS, TIMEOUT_MS, packCopy, sh } from './packed.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';

const MANIFEST = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
const PEER_RANGE = MANIFEST.peerDependencies['@grpc/grpc-js'] as string;
/** The range's floor: the first grpc-js with server interceptors. */
const LOWEST = '1.10.0';
const OFFLINE = /ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|FetchError/;

const TSCONFIG = {
  compilerOptions: {
    target: 'esnext',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    skipLibCheck: false,
    types: ['node'],
    outDir: 'out',
  },
  include: ['main.ts'],
};

/** A grpc-js server with the interceptor (when the installed grpc-js allows it), called without and with a token. */
const PROGRAM = `
import * as grpc from '@grpc/grpc-js';
import { createJwtServer } from 'jwt-grpc';
import { jwtAuthInterceptor, verifiedClaims } from 'jwt-grpc/client';
import { generateKeys } from 'jwt-grpc/keys';
import { ANY_AUDIENCE, createSigner, createVerifier } from 'jwt-grpc/tokens';

const keys = await generateKeys({ algorithms: ['ES256'] });
const same = (b: Buffer): Buffer => b;
const method = { path: '/demo.Greeter/Hello', requestStream: false, responseStream: false, requestSerialize: same, requestDeserialize: same, responseSerialize: same, responseDeserialize: same };
const service = { hello: method } as unknown as grpc.ServiceDefinition;

let interceptors: grpc.ServerInterceptor[] = [];
try {
  interceptors = [jwtAuthInterceptor(createVerifier(keys, { audience: ANY_AUDIENCE }))];
} catch (err) {
  console.log('interceptor refused:', (err as { code?: string }).code, (err as Error).message);
}
const server = new grpc.Server({ interceptors });
server.addService(service, {
  hello(call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) {
    try {
      callback(null, Buffer.from(String(verifiedClaims(call).sub)));
    } catch (err) {
      callback(err as grpc.ServerErrorResponse);
    }
  },
});
const port = await new Promise<number>((resolve, reject) =>
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
);
// grpc-js before 1.10 serves only after start() (later ones start at bind and deprecate it).
if (interceptors.length === 0) (server as unknown as { start(): void }).start();
const Client = grpc.makeGenericClientConstructor(service, 'Greeter');
const client = new Client('127.0.0.1:' + port, grpc.credentials.createInsecure()) as unknown as {
  hello(req: Buffer, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res?: Buffer) => void): void;
  close(): void;
};
const call = (md: grpc.Metadata): Promise<string> =>
  new Promise((resolve) => client.hello(Buffer.alloc(0), md, (err, res) => resolve(err ? 'status ' + grpc.status[err.code] : 'OK ' + String(res))));
console.log('without a token:', await call(new grpc.Metadata()));
const now = Math.floor(Date.now() / 1000);
const withToken = new grpc.Metadata();
withToken.set('authorization', 'Bearer ' + createSigner(keys).sign('ES256', { sub: 'ada', exp: now + 60 }).token);
console.log('with a token:', await call(withToken));
client.close();
server.forceShutdown();
try {
  const jwtServer = createJwtServer({ keys, transport: 'grpc-js' });
  await jwtServer.listen('127.0.0.1:0');
  await jwtServer.close();
  console.log('grpc-js transport: served and closed');
} catch (err) {
  console.log('grpc-js transport refused:', (err as { code?: string }).code, (err as Error).message);
}
`;

let work: string;
let tarball: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'jwt-grpc-peer-'));
  tarball = await packCopy(work);
}, PACK_TIMEOUT_MS + 30_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

/** A fresh app with the tarball and `grpcJs` (a version or range) installed; the registry must be reachable. */
async function appWith(grpcJs: string, extraFlags: readonly string[] = []): Promise<string> {
  const app = join(work, `app-${grpcJs.replace(/[^\w.]/g, '_')}`);
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'grpc-js-user', private: true, type: 'module' }));
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  writeFileSync(join(app, 'main.ts'), PROGRAM);
  const args = [
    'install',
    '--no-audit',
    '--no-fund',
    ...extraFlags,
    'typescript@latest',
    '@types/node@latest',
    `@grpc/grpc-js@${grpcJs}`,
    tarball,
  ];
  try {
    await sh('npm', args, app, { what: `npm install of the packed tarball with @grpc/grpc-js@${grpcJs}`, timeoutMs: INSTALL_TIMEOUT_MS });
  } catch (err) {
    if (OFFLINE.test((err as Error).message)) {
      throw new Error(`this test installs @grpc/grpc-js@${grpcJs} from the npm registry, which cannot be reached from here`, {
        cause: err,
      });
    }
    throw err;
  }
  return app;
}

/** Every installed copy of grpc-js under the app, as versions. */
function grpcJsCopies(app: string): string[] {
  const copies: string[] = [];
  const walk = (modules: string): void => {
    let names: string[];
    try {
      names = readdirSync(modules);
    } catch {
      return;
    }
    for (const name of names) {
      if (name === '@grpc') {
        try {
          copies.push((JSON.parse(readFileSync(join(modules, '@grpc', 'grpc-js', 'package.json'), 'utf8')) as { version: string }).version);
        } catch {
          // @grpc/proto-loader without grpc-js beside it
        }
        walk(join(modules, '@grpc', 'grpc-js', 'node_modules'));
        walk(join(modules, '@grpc', 'proto-loader', 'node_modules'));
      } else if (!name.startsWith('.')) {
        walk(join(modules, name, 'node_modules'));
      }
    }
  };
  walk(join(app, 'node_modules'));
  return copies;
}

// The three apps install, compile and run side by side, each in its own directory: their time
// is npm waiting on the registry and tsc, not one of them needing the machine (85 s in a row
// on 2 shared cores).
describe.concurrent(`@grpc/grpc-js as a peer (${PEER_RANGE})`, () => {
  it.each([
    ['lowest', LOWEST],
    ['newest', '<2'],
  ])(
    'the %s grpc-js of the range: one copy, types check, a call without a token is refused',
    async (_which, version) => {
      const app = await appWith(version);
      const copies = grpcJsCopies(app);
      expect(copies).toHaveLength(1);
      if (version === LOWEST) expect(copies[0]).toBe(LOWEST);
      await expect(sh('npx', ['tsc', '-p', '.'], app)).resolves.toBe('');
      expect((await sh('node', [join('out', 'main.js')], app)).split('\n')).toEqual([
        'without a token: status UNAUTHENTICATED',
        'with a token: OK ada',
        'grpc-js transport: served and closed',
        '',
      ]);
    },
    TIMEOUT_MS,
  );

  it(
    'grpc-js 1.9 forced in: jwtAuthInterceptor and the grpc-js transport refuse it by version, and a call without a token is still not OK',
    async () => {
      const app = await appWith('1.9.16', ['--legacy-peer-deps']);
      // Built against the newest grpc-js's types (1.9 has no ServerInterceptor type): the same program as above.
      await sh('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--legacy-peer-deps', '@grpc/grpc-js@<2'], app);
      await sh('npx', ['tsc', '-p', '.'], app);
      await sh('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--legacy-peer-deps', '@grpc/grpc-js@1.9.16'], app);
      expect(grpcJsCopies(app)).toEqual(['1.9.16']);
      const output = (await sh('node', [join('out', 'main.js')], app)).split('\n');
      expect(output[0]).toBe(
        'interceptor refused: ERR_GRPC_JS_VERSION jwtAuthInterceptor needs @grpc/grpc-js >= 1.10 (server interceptors); ' +
          'the installed @grpc/grpc-js 1.9.16 would ignore it and let every call in unauthenticated',
      );
      expect(output[1]).toBe('without a token: status UNAUTHENTICATED');
      // createJwtServer refuses the transport at creation, rather than refusing every call and throwing in close().
      expect(output[3]).toBe(
        "grpc-js transport refused: ERR_GRPC_JS_VERSION transport 'grpc-js' needs @grpc/grpc-js >= 1.10 (server drain and interceptors); " +
          "the installed @grpc/grpc-js 1.9.16 would refuse every call: install @grpc/grpc-js@'>=1.10 <2', or use transport 'http2'",
      );
    },
    TIMEOUT_MS,
  );
});
