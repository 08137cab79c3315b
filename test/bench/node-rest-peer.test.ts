/**
 * The Node REST peer (bench/peers/node-rest): node:http + fast-jwt behind `POST /token`, on
 * loopback as the REST rows drive it. Its tokens verify with jose; what is not the request
 * gets the right HTTP status; a gRPC-only flag is refused at start. Needs the built dist/.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as jose from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUBJECTS_FILE, repoPath } from '../../bench/kit/paths.js';
import { generateJwks } from '../../bench/harness/keys-file.js';
import { type ServerProcess, runToExit, startServer } from '../../bench/kit/launcher.js';

const PEER = repoPath('dist', 'bench', 'peers', 'node-rest', 'server.js');
const subjects = JSON.parse(readFileSync(SUBJECTS_FILE, 'utf8')) as string[];

describe('the node-rest peer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'node-rest-'));
  const jwks = generateJwks(['HS256', 'ES256']);
  const keysFile = join(dir, 'keys.json');
  writeFileSync(keysFile, JSON.stringify(jwks), { mode: 0o600 });
  let server: ServerProcess;
  const url = (path = '/token') => `http://127.0.0.1:${server.port}${path}`;
  const post = (body: string, path?: string) => fetch(url(path), { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  beforeAll(async () => {
    server = await startServer('node-rest', process.execPath, [PEER, '--port', '0', '--keys', keysFile, '--subjects', SUBJECTS_FILE]);
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['HS256', 'ES256'])(
    "POST /token %s: {jwt, sub}, {sub, iat, exp = iat + 7200} signed with the run's key, jose verifies it",
    async (alg) => {
      const res = await post(JSON.stringify({ algorithm: alg }));
      expect(res.status).toBe(200);
      const body = (await res.json()) as { jwt: string; sub: string };
      expect(Object.keys(body).sort()).toEqual(['jwt', 'sub']);
      const jwk = jwks.keys.find((k) => k.alg === alg) as jose.JWK & { kid: string };
      const { d: _d, ...pub } = jwk;
      const key = await jose.importJWK(alg === 'HS256' ? jwk : pub, alg);
      const { payload, protectedHeader } = await jose.jwtVerify(body.jwt, key, { algorithms: [alg] });
      expect(protectedHeader).toMatchObject({ alg, kid: jwk.kid });
      expect(payload.sub).toBe(body.sub);
      expect(subjects).toContain(body.sub);
      expect((payload.exp as number) - (payload.iat as number)).toBe(7200);
    },
  );

  it('answers 400 for an algorithm with no key or a body that is not JSON, 404 elsewhere, 405 for another method', async () => {
    const unknown = await post('{"algorithm":"RS256"}');
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({ error: 'algorithm "RS256" is not configured' });
    expect((await post('not json')).status).toBe(400);
    expect((await post('{"algorithm":"HS256"}', '/other')).status).toBe(404);
    expect((await fetch(url(), { method: 'GET' })).status).toBe(405);
    // Still serving after all of them.
    expect((await post('{"algorithm":"HS256"}')).status).toBe(200);
  });

  it.each([['--count-calls'], ['--proto', 'x.proto']])('refuses %s at start: a gRPC option, not silently ignored', async (...flag) => {
    const run = await runToExit(process.execPath, [PEER, '--port', '0', '--keys', keysFile, '--subjects', SUBJECTS_FILE, ...flag], {
      timeoutMs: 10_000,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/node-rest peer: --proto and --count-calls are gRPC options/);
  });
});
