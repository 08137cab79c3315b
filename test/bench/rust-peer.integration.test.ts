/**
 * The Rust peer (bench/peers/rust): built with cargo as the benchmark builds it, then over a
 * real connection on loopback, its gRPC GenerateJwt and its REST `POST /token` make tokens
 * jose verifies with the public half of the run's keys, doing the reference work; and the
 * REST rows count a refused call as an error on every server. Skipped, saying so, where
 * cargo is not installed.
 */
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as jose from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUBJECTS_FILE } from '../../bench/kit/paths.js';
import { planCores } from '../../bench/harness/cores.js';
import { type KeysFile, generateJwks, writeKeysFile } from '../../bench/harness/keys-file.js';
import { cargoBuild } from '../../bench/kit/cargo-build.js';
import { findOnPath } from '../../bench/kit/exec.js';
import { type ServerProcess, runToExit, startServer } from '../../bench/kit/launcher.js';
import { findH2load } from '../../bench/kit/h2load.js';
import { REST_SERVERS, runRestSection } from '../../bench/load/rest-section.js';
import { RUST_PEER_BINARY, RUST_PEER_DIR } from '../../bench/macro/servers.js';
import { PROTO_PATH } from '../../src/base/package-root.js';
import { clientConstructor, unary } from '../../bench/kit/grpc-clients.js';

const cargo = findOnPath('cargo');
const ALGORITHMS = ['HS256', 'ES256', 'RS256', 'EdDSA'] as const;
const subjects = JSON.parse(readFileSync(SUBJECTS_FILE, 'utf8')) as string[];

describe('cargoBuild', () => {
  it('kills a build past its deadline and says which build hung', () => {
    // A `cargo` that never finishes, first on PATH: the deadline, not cargo, ends it.
    const dir = mkdtempSync(join(tmpdir(), 'fake-cargo-'));
    const savedPath = process.env.PATH;
    try {
      writeFileSync(join(dir, 'cargo'), '#!/bin/sh\nexec sleep 30\n');
      chmodSync(join(dir, 'cargo'), 0o755);
      process.env.PATH = `${dir}:${savedPath ?? ''}`;
      const started = Date.now();
      const outcome = cargoBuild(RUST_PEER_DIR, 'the Rust peer', 500);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(outcome).toEqual({
        ok: false,
        reason: expect.stringMatching(/^cargo build --release of the Rust peer .* did not finish within 1 s and was killed/),
      });
    } finally {
      process.env.PATH = savedPath;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says cargo is missing, and how to get it, where it is not on PATH', () => {
    const savedPath = process.env.PATH;
    try {
      process.env.PATH = '/nonexistent';
      expect(cargoBuild(RUST_PEER_DIR, 'the Rust peer')).toEqual({
        ok: false,
        reason: expect.stringMatching(/cargo not found on PATH: the Rust peer cannot be built \(install Rust/),
      });
    } finally {
      process.env.PATH = savedPath;
    }
  });
});

describe.skipIf(cargo === null)('the Rust peer (skipped without cargo on PATH: install Rust from https://rustup.rs)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rust-peer-'));
  const jwks = generateJwks([...ALGORITHMS]);
  const keysFile = join(dir, 'keys.json');
  writeFileSync(keysFile, JSON.stringify(jwks), { mode: 0o600 });
  const servers: ServerProcess[] = [];
  let grpcPort = 0;
  let restPort = 0;

  const start = async (extra: string[], env: Record<string, string> = { TOKIO_WORKER_THREADS: '1' }): Promise<ServerProcess> => {
    const server = await startServer(
      'rust peer',
      RUST_PEER_BINARY,
      ['--port', '0', '--keys', keysFile, '--subjects', SUBJECTS_FILE, ...extra],
      { env },
    );
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    // A cold build is minutes on 2 cores; the benchmark's own deadline applies.
    expect(cargoBuild(RUST_PEER_DIR, 'the Rust peer')).toEqual({ ok: true });
    grpcPort = (await start([])).port;
    restPort = (await start(['--rest'])).port;
  }, 960_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** The public half of the key of `alg` in the run's keys file, as jose imports it. */
  const publicKey = async (alg: string) => {
    const jwk = jwks.keys.find((k) => k.alg === alg) as jose.JWK & { kid: string };
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = jwk;
    return { kid: jwk.kid, key: await jose.importJWK(alg === 'HS256' ? jwk : pub, alg) };
  };

  /** A token checked as every peer's must be: jose verifies it, {sub, iat, exp = iat + 7200}, header {alg, typ, kid}. */
  const expectReferenceToken = async (jwt: string, alg: string, sub: string) => {
    const { kid, key } = await publicKey(alg);
    const { payload, protectedHeader } = await jose.jwtVerify(jwt, key, { algorithms: [alg] });
    expect(protectedHeader).toEqual({ alg, typ: 'JWT', kid });
    expect(Object.keys(payload).sort()).toEqual(['exp', 'iat', 'sub']);
    expect(payload.sub).toBe(sub);
    expect(subjects).toContain(sub);
    expect((payload.exp as number) - (payload.iat as number)).toBe(7200);
    expect(Math.abs((payload.iat as number) - Date.now() / 1000)).toBeLessThan(60);
  };

  describe('over gRPC (tonic)', () => {
    let client: grpc.Client;
    beforeAll(() => {
      const JwtService = clientConstructor(PROTO_PATH, 'jwt.services.JwtService');
      client = new JwtService(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure());
    });
    afterAll(() => client?.close());
    const call = (method: string, req: object) => unary<Record<string, unknown>>(client, method, req);

    it.each(ALGORITHMS)('GenerateJwt %s: a token jose verifies, sub from the pool, and VerifyJwt accepts it', async (alg) => {
      const res = await call('GenerateJwt', { algorithm: alg });
      await expectReferenceToken(res['jwt'] as string, alg, res['sub'] as string);
      expect(res['kid']).toBe((await publicKey(alg)).kid);
      expect(await call('VerifyJwt', { jwt: res['jwt'] })).toMatchObject({ valid: true, sub: res['sub'] });
      // Changing the signature fails verification.
      const parts = (res['jwt'] as string).split('.');
      const forged = `${parts[0]}.${parts[1]}.${parts[2]?.startsWith('A') ? 'B' : 'A'}${parts[2]?.slice(1)}`;
      expect(await call('VerifyJwt', { jwt: forged })).toMatchObject({ valid: false });
    });

    it('takes the subject asked for, and answers INVALID_ARGUMENT for an algorithm with no key', async () => {
      const res = await call('GenerateJwt', { algorithm: 'HS256', subject: subjects[0] });
      expect(res['sub']).toBe(subjects[0]);
      await expect(call('GenerateJwt', { algorithm: 'ES384' })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: expect.stringContaining('ES384'),
      });
    });
  });

  describe('over REST (axum)', () => {
    const post = (body: string) =>
      fetch(`http://127.0.0.1:${restPort}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

    it.each(ALGORITHMS)('POST /token %s: {jwt, sub}, a token jose verifies', async (alg) => {
      const res = await post(JSON.stringify({ algorithm: alg }));
      expect(res.status).toBe(200);
      const body = (await res.json()) as { jwt: string; sub: string };
      expect(Object.keys(body).sort()).toEqual(['jwt', 'sub']);
      await expectReferenceToken(body.jwt, alg, body.sub);
    });

    it('answers 400 for an algorithm with no key, and for a body that is not the request', async () => {
      const unknown = await post('{"algorithm":"ES384"}');
      expect(unknown.status).toBe(400);
      expect(await unknown.json()).toEqual({ error: 'algorithm "ES384" is not configured' });
      expect((await post('not json')).status).toBe(400);
    });
  });

  it('runs one Tokio worker thread per TOKIO_WORKER_THREADS, as the Go peer GOMAXPROCS', async () => {
    const threads = (pid: number) => readdirSync(`/proc/${pid}/task`).length;
    const one = servers[0] as ServerProcess;
    const three = await start([], { TOKIO_WORKER_THREADS: '3' });
    // The main thread (accepting) and the workers.
    expect(threads(one.pid as number)).toBe(2);
    expect(threads(three.pid as number)).toBe(4);
  });

  it('refuses at start a key whose public half is not its private half, an unsupported alg, a duplicate kid', async () => {
    const es = jwks.keys.find((k) => k.alg === 'ES256') as Record<string, string>;
    const other = generateJwks(['ES256']).keys[0] as Record<string, string>;
    const cases: [string, object, RegExp][] = [
      ['mismatch', { keys: [{ ...es, x: other['x'], y: other['y'] }] }, /self-test (sign|verify)/],
      ['alg', { keys: [{ ...es, alg: 'ES384' }] }, /unsupported alg "ES384"/],
      ['dup', { keys: [es, { ...jwks.keys[0], kid: es['kid'] }] }, /duplicate kid/],
    ];
    for (const [name, set, message] of cases) {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, JSON.stringify(set), { mode: 0o600 });
      const run = await runToExit(RUST_PEER_BINARY, ['--port', '0', '--keys', file, '--subjects', SUBJECTS_FILE], { timeoutMs: 10_000 });
      expect(run.code, name).toBe(1);
      expect(run.stderr, name).toMatch(message);
      // No key material in the message (the error names the kid and the field, never a value).
      expect(run.stderr, name).not.toContain(es['d']);
    }
  });

  describe.skipIf(findH2load() === null)('the REST rows (skipped without h2load)', () => {
    let keys: KeysFile;
    let scratchDir: string;
    beforeAll(() => {
      keys = writeKeysFile(['HS256']);
      scratchDir = mkdtempSync(join(tmpdir(), 'rest-rows-'));
    });
    afterAll(() => {
      keys?.remove();
      rmSync(scratchDir, { recursive: true, force: true });
    });
    const section = (algorithm: string) =>
      runRestSection(
        { plan: planCores(null), keysFile: keys.path, scratchDir, ghz: 'unused', log: () => undefined, onServers: () => undefined },
        { algorithms: [algorithm], servers: REST_SERVERS, skipped: new Map(), durationS: 0.5, warmupS: 0, rounds: 1 },
      );

    it('count OK calls on every server, and each call the server refused as an error, not a success', { timeout: 120_000 }, async () => {
      const ok = await section('HS256');
      expect(ok.skipped).toBeNull();
      expect(ok.cells.map((c) => c.server)).toEqual(['node-fast-jwt', 'node-rest', 'rust', 'rust-rest']);
      for (const cell of ok.cells) {
        expect(cell.error, cell.server).toBeNull();
        expect(cell.rounds[0]?.h2load.errors, cell.server).toBe(0);
        expect(cell.rounds[0]?.h2load.requestsPerS, cell.server).toBeGreaterThan(0);
        expect(cell.rounds[0]?.h2load.cpuPerCallUs, cell.server).toBeGreaterThan(0);
      }
      expect(ok.ratios.map((r) => `${r.stack} ${r.grpc}/${r.rest}`)).toEqual(['Node node-fast-jwt/node-rest', 'Rust rust/rust-rest']);
      // RS256 has no key: gRPC answers INVALID_ARGUMENT inside an HTTP 200, REST a 400.
      const refused = await section('RS256');
      for (const cell of refused.cells) {
        expect(cell.error, cell.server).toBeNull();
        expect(cell.rounds[0]?.h2load.errors, cell.server).toBeGreaterThan(0);
        expect(cell.rounds[0]?.h2load.requestsPerS, cell.server).toBe(0);
      }
    });
  });
});
