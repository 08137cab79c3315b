/**
 * `npm run bench:key-sign-cost`: where an ES256 signature through SoftHSM2 spends its CPU,
 * in one process, against a key in memory of the same kind.
 * The reference is the in-memory signer GenerateJwt uses; after OpenSSL's raw-form signature,
 * each step adds one thing to the one before: the token's C_Sign (synchronous) on a
 * session object, then on a token object (SoftHSM2's file object store checks the
 * object's file on each use), then pkcs11js's C_SignAsync (libuv's thread pool: what
 * keeps the signature off the event loop), then our backend (session pool, digest in
 * Node), then KeyHandle (deadline, breaker, concurrency bound). Run it pinned to one core,
 * as the server runs in `bench:key-backends`:
 *
 *   npm run build && taskset -c 0 node dist/bench/keys/sign-cost.js [--calls 4000] [--rounds 3]
 */
import { createHash, generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type * as Pkcs11 from 'pkcs11js';
import { ecdsa as ecdsaSpec } from '../../src/algorithms/ecdsa.js';
import { KeyHandle } from '../../src/keys/backend.js';
import { pkcs11Backend } from '../../src/keys/backends/pkcs11.js';
import { runCli } from '../kit/cli.js';
import { PIN, SOFTHSM_MODULE, softToken, softhsmMissing } from '../kit/hsm.js';
import { markdownTable } from '../common/markdown.js';

/** A JWS signing input of the size GenerateJwt signs (header and a few claims). */
const INPUT = Buffer.from(
  `${Buffer.from('{"alg":"ES256","typ":"JWT","kid":"k"}').toString('base64url')}.${Buffer.from('{"sub":"ada@example.com","iat":1700000000,"exp":1700003600}').toString('base64url')}`,
);
const P256 = Buffer.from('06082a8648ce3d030107', 'hex');

interface Step {
  readonly name: string;
  run(): unknown;
}

/** CPU (this process, every thread) and wall µs per call over `calls` calls awaited one at a time. */
async function time(step: Step, calls: number): Promise<{ cpu: number; wall: number }> {
  for (let i = 0; i < 200; i++) await step.run();
  const cpu0 = process.cpuUsage();
  const wall0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await step.run();
  const cpu = process.cpuUsage(cpu0);
  return { cpu: (cpu.user + cpu.system) / calls, wall: Number(process.hrtime.bigint() - wall0) / 1e3 / calls };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] as number;
}

/** A session logged in on the token, and a P-256 key pair made in it (`token`: persistent, else a session object). */
function rawKey(lib: typeof Pkcs11, module: Pkcs11.PKCS11, session: Pkcs11.Handle, token: boolean): Pkcs11.Handle {
  const common = [{ type: lib.CKA_TOKEN, value: token }];
  const pair = module.C_GenerateKeyPair(
    session,
    { mechanism: lib.CKM_EC_KEY_PAIR_GEN },
    [...common, { type: lib.CKA_VERIFY, value: true }, { type: lib.CKA_EC_PARAMS, value: P256 }],
    [
      ...common,
      { type: lib.CKA_SIGN, value: true },
      { type: lib.CKA_PRIVATE, value: true },
      { type: lib.CKA_SENSITIVE, value: true },
      { type: lib.CKA_EXTRACTABLE, value: false },
    ],
  );
  return pair.privateKey;
}

async function steps(dir: string): Promise<{ list: Step[]; close: () => Promise<void> }> {
  const token = softToken(dir);
  const file = join(dir, 'keys.json');
  const made = await runCli(['keys', 'generate', '--alg', 'ES256', '--kid', 'k', '--pkcs11', token.uri('bench'), '--out', file], {
    env: token.env,
  });
  if (made.code !== 0) throw new Error(made.stderr);
  const entry = (JSON.parse(readFileSync(file, 'utf8')) as { keys: Record<string, string>[] }).keys[0] as Record<string, string>;
  const ref = entry['pkcs11'] as string;
  const opened = await pkcs11Backend.open(ref, 'ES256', { signal: AbortSignal.timeout(10_000), timeoutMs: 10_000 });
  const handle = new KeyHandle(pkcs11Backend, ref, 'k', 'ES256', { kty: entry['kty'], crv: entry['crv'], x: entry['x'], y: entry['y'] });
  await handle.open(10_000);
  const lib = createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11;
  const module = new lib.PKCS11();
  module.load(SOFTHSM_MODULE);
  try {
    module.C_Initialize({ flags: lib.CKF_OS_LOCKING_OK });
  } catch {
    // Initialised by the backend already: one C_Initialize per process.
  }
  const session = module.C_OpenSession(module.C_GetSlotList(true)[0] as Pkcs11.Handle, lib.CKF_SERIAL_SESSION | lib.CKF_RW_SESSION);
  try {
    module.C_Login(session, lib.CKU_USER, PIN);
  } catch {
    // Logged in by the backend's session: a login is the token's, not the session's.
  }
  const sessionKey = rawKey(lib, module, session, false);
  const tokenKey = rawKey(lib, module, session, true);
  const ecdsa = { mechanism: lib.CKM_ECDSA };
  const digest = (): Buffer => createHash('sha256').update(INPUT).digest();
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const inMemory = ecdsaSpec('sha256', 'P-256').prepareSign(privateKey);
  const list: Step[] = [
    // The reference: what a key in memory costs GenerateJwt (a bare KeyObject signs DER, the fast path; r||s made in JavaScript).
    { name: "jwt-grpc's in-memory ES256 signer", run: () => inMemory(INPUT) },
    {
      name: 'node:crypto sign, ieee-p1363 (r||s from OpenSSL)',
      run: () => cryptoSign('sha256', INPUT, { key: privateKey, dsaEncoding: 'ieee-p1363' }),
    },
    {
      name: 'SoftHSM2 C_SignInit + C_Sign, session object',
      run: () => (module.C_SignInit(session, ecdsa, sessionKey), module.C_Sign(session, digest(), Buffer.alloc(64))),
    },
    {
      name: 'SoftHSM2 C_SignInit + C_Sign, token object',
      run: () => (module.C_SignInit(session, ecdsa, tokenKey), module.C_Sign(session, digest(), Buffer.alloc(64))),
    },
    {
      name: '+ C_SignAsync (libuv thread pool)',
      run: () => (module.C_SignInit(session, ecdsa, tokenKey), module.C_SignAsync(session, digest(), Buffer.alloc(64))),
    },
    { name: '+ our backend (session pool, digest)', run: () => opened.sign(INPUT, new AbortController().signal) },
    { name: '+ KeyHandle (deadline, breaker, bound)', run: () => handle.sign(INPUT, 2000) },
  ];
  return {
    list,
    async close() {
      module.C_CloseSession(session);
      await opened.close();
      await handle.close();
    },
  };
}

const { values } = parseArgs({ options: { calls: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '3' } } });
const missing = softhsmMissing();
if (missing !== undefined) {
  process.stderr.write(`key-sign-cost: ${missing}\n`);
  process.exit(1);
}
const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-sign-cost-'));
try {
  const { list, close } = await steps(dir);
  const cpu = list.map(() => [] as number[]);
  const wall = list.map(() => [] as number[]);
  // Interleaved: each round times every step, so a machine's load moves all of them alike.
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [at, step] of list.entries()) {
      const measured = await time(step, Number(values.calls));
      cpu[at]?.push(measured.cpu);
      wall[at]?.push(measured.wall);
    }
  }
  await close();
  const reference = median(cpu[0] as number[]);
  process.stdout.write(
    `ES256, one signature at a time, ${values.calls} calls a step, median of ${values.rounds} interleaved rounds; CPU: this process, every thread\n\n` +
      markdownTable(
        ['step', 'CPU µs/call', '× in memory', 'wall µs/call'],
        list.map((step, at) => [
          step.name,
          median(cpu[at] as number[]).toFixed(1),
          (median(cpu[at] as number[]) / reference).toFixed(2),
          median(wall[at] as number[]).toFixed(1),
        ]),
      ) +
      '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
