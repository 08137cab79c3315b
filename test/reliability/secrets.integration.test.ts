/**
 * Secrets stay in the key file. The CLI runs with a key file of known secrets (an HS256
 * oct key with a random `k`, an ES256 JWK with `d`, an RS256 key given as a PEM file),
 * on each transport, single process and cluster, logging text and JSON, with /metrics on; every RPC is
 * called, with good and bad input (unknown algorithms, broken claims_json, malformed,
 * tampered and foreign tokens, a garbage protobuf, an oversized message), the keys are
 * reloaded (SIGHUP), /metrics is scraped, then the server gets SIGTERM. Nothing the run
 * produced (all of stdout and stderr, the metrics, every answer and error a client saw)
 * may hold `k`, `d`, the RSA private key (PEM body, any of its lines, its JWK members),
 * in base64url, base64 or hex; the logs, metrics and error messages may hold no token the
 * server issued. Broken key files holding secrets fail without quoting them, at start
 * and on reload. `jwt-grpc keys generate | rotate | public` print kids, never key
 * material (`public`: public keys only). (That the benchmark's smoke run writes no token
 * or private key into its results is checked on the one smoke run, test/bench/smoke.integration.test.ts.)
 */
import { createHmac, createPrivateKey, createSecretKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { within } from '../../bench/kit/wait.js';
import { launchCli, runCli, serveArgs } from '../../bench/kit/cli.js';
import { TRANSPORTS, transportArgs } from '../../bench/kit/jwt-servers.js';
import { reliabilityFixture } from './fixture.js';
import { type GrpcJsJwtClient, call, generate, grpcJsJwtClient, rawUnary, ready, JWT_PATTERN, PRIVATE_PATTERNS } from './helpers.js';
import { grpcFrame } from '../../bench/kit/grpc-body.js';
import { rawSession } from '../transport/helpers/raw.js';
import { bannerMetricsPort, httpGet } from '../ops/helpers.js';

interface Needle {
  readonly what: string;
  readonly value: string;
}

/** A JWT in compact form: three base64url parts, the first two JSON objects (`eyJ` = `{"`). */

/** The forms a leaked secret could take: base64url (as in the JWK), base64 and hex of the same bytes. */
function forms(what: string, base64url: string): Needle[] {
  const bytes = Buffer.from(base64url, 'base64url');
  return [
    { what, value: base64url },
    { what: `${what} (base64)`, value: bytes.toString('base64').replace(/=+$/, '') },
    { what: `${what} (hex)`, value: bytes.toString('hex') },
  ];
}

function findLeaks(haystack: string, needles: readonly Needle[]): string[] {
  return needles.filter((n) => haystack.includes(n.value)).map((n) => n.what);
}

describe.skipIf(process.platform !== 'linux')('secrets never leave the key file', () => {
  const fixture = reliabilityFixture('secrets');
  let keysFile: string;
  let secrets: Needle[] = [];
  /** Every token the servers issued during the run. */
  const issued = new Set<string>();

  beforeAll(() => {
    const dir = fixture.dir;
    const hs = createSecretKey(randomBytes(32)).export({ format: 'jwk' });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const pem = rsa.export({ type: 'pkcs8', format: 'pem' }) as string;
    const rsaJwk = createPrivateKey(pem).export({ format: 'jwk' });
    writeFileSync(join(dir, 'rsa.pem'), pem, { mode: 0o600 });
    keysFile = join(dir, 'keys.json');
    writeFileSync(
      keysFile,
      JSON.stringify({
        keys: [
          { ...hs, kid: 'secret-hs', alg: 'HS256' },
          { ...ec, kid: 'secret-es', alg: 'ES256' },
          { kid: 'secret-rs', alg: 'RS256', pemFile: 'rsa.pem' },
        ],
      }),
      { mode: 0o600 },
    );
    const pemLines = pem.split('\n').filter((line) => line !== '' && !line.startsWith('-----'));
    secrets = [
      ...forms('HS256 k', hs.k as string),
      ...forms('ES256 d', ec.d as string),
      { what: 'RSA PEM body', value: pemLines.join('') },
      ...pemLines.filter((line) => line.length >= 32).map((line, i) => ({ what: `RSA PEM line ${i + 1}`, value: line })),
      ...forms('RSA d', rsaJwk.d as string),
      ...forms('RSA p', rsaJwk.p as string),
      ...forms('RSA q', rsaJwk.q as string),
    ];
  });

  /**
   * Calls every RPC with good and bad input; returns everything the clients saw
   * (responses and error messages) as text, and records the tokens issued.
   */
  async function exercise(port: number): Promise<{ seen: string[]; errors: string[] }> {
    const seen: string[] = [];
    const errors: string[] = [];
    // Several connections, so that a cluster's workers all take part.
    const clients: GrpcJsJwtClient[] = Array.from({ length: 4 }, () => grpcJsJwtClient(port));
    try {
      await Promise.all(clients.map((c) => ready(c)));
      let turn = 0;
      const next = (): GrpcJsJwtClient => clients[turn++ % clients.length] as GrpcJsJwtClient;
      const record = (result: { error: { message: string; details: string } | null; response?: unknown }): void => {
        if (result.error !== null) errors.push(`${result.error.message} | ${result.error.details}`);
        if (result.response !== undefined) seen.push(JSON.stringify(result.response));
      };
      const verify = async (jwt: string, extra: { audience?: string; issuer?: string } = {}) => {
        const result = await call<{ valid: boolean; reason: string }>((cb) =>
          next().VerifyJwt({ jwt, ...extra }, { deadline: Date.now() + 10_000 }, cb),
        );
        record(result);
        return result;
      };

      const jwks = await call<{ jwks_json: string }>((cb) => next().GetJwks({}, { deadline: Date.now() + 10_000 }, cb));
      record(jwks);
      expect(jwks.error).toBeNull();
      const published = JSON.parse(jwks.response?.jwks_json ?? '{}') as { keys: Record<string, unknown>[] };
      expect(published.keys.map((k) => k['kid']).sort()).toEqual(['secret-es', 'secret-rs']);

      const tokens: string[] = [];
      for (const algorithm of ['HS256', 'ES256', 'RS256']) {
        for (let i = 0; i < 4; i++) {
          const result = await generate(next(), {
            algorithm,
            subject: 'secrets@example.com',
            audience: 'reliability',
            ttl_seconds: 600,
            claims_json: JSON.stringify({ role: 'tester', n: i }),
          });
          expect(result.error, `${algorithm}: ${result.error?.message}`).toBeNull();
          const jwt = result.response?.jwt as string;
          issued.add(jwt);
          tokens.push(jwt);
          seen.push(JSON.stringify({ ...result.response, jwt: '<issued token>' }));
        }
      }
      for (const jwt of tokens) {
        expect((await verify(jwt)).response?.valid).toBe(true);
        expect((await verify(jwt, { audience: 'someone-else' })).response?.reason).toBe('AUDIENCE_MISMATCH');
        expect((await verify(jwt, { issuer: 'someone-else' })).response?.valid).toBe(false);
      }

      // Bad GenerateJwt requests: each must fail cleanly.
      const badGenerate = [
        { algorithm: 'XX999', subject: 'a@example.com' },
        { algorithm: 'none', subject: 'a@example.com' },
        { algorithm: '', subject: 'a@example.com' },
        { algorithm: 'hs256', subject: 'a@example.com' },
        { algorithm: 'HS256', subject: '' },
        { algorithm: 'HS256', subject: 'a@example.com', claims_json: '{' },
        { algorithm: 'HS256', subject: 'a@example.com', claims_json: '[]' },
        { algorithm: 'HS256', subject: 'a@example.com', claims_json: '"text"' },
        { algorithm: 'HS256', subject: 'a@example.com', claims_json: '{"exp": 1}' },
        { algorithm: 'HS256', subject: 'a@example.com', claims_json: '{"sub": "someone"}' },
        { algorithm: 'ES256', subject: 'a@example.com', ttl_seconds: -5 },
        { algorithm: 'RS256', subject: 'a@example.com', ttl_seconds: 10 ** 12 },
        { algorithm: 'HS256', subject: 'x'.repeat(70_000) },
      ];
      for (const request of badGenerate) {
        const result = await generate(next(), request);
        record(result);
        expect(result.error, `accepted: ${JSON.stringify(request).slice(0, 100)}`).not.toBeNull();
      }

      // Bad tokens: VerifyJwt answers valid = false (or an error), never valid.
      const sample = tokens[0] as string;
      const [header, payload, signature] = sample.split('.') as [string, string, string];
      const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
      const foreign = (() => {
        const other = createSecretKey(randomBytes(32));
        const h = b64({ alg: 'HS256', typ: 'JWT', kid: 'secret-hs' });
        const p = b64({ sub: 'mallory@example.com', exp: Math.floor(Date.now() / 1000) + 600 });
        return `${h}.${p}.${createHmac('sha256', other.export()).update(`${h}.${p}`).digest('base64url')}`;
      })();
      const badTokens = [
        '',
        'abc',
        'a.b.c',
        `${header}.${payload}`,
        `${header}.${payload}.${signature}.extra`,
        `${header}.${payload}.${signature.slice(0, -4)}AAAA`,
        `${header}.${payload.slice(0, -3)}.${signature}`,
        `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`,
        `${b64({ alg: 'HS256', kid: 'no-such-key' })}.${payload}.${signature}`,
        `${b64({ alg: 'RS256', kid: 'secret-rs', jku: 'https://attacker.example/jwks' })}.${payload}.${signature}`,
        `${b64({ alg: 'HS256', kid: 'secret-es' })}.${payload}.${signature}`,
        foreign,
      ];
      for (const jwt of badTokens) {
        const result = await verify(jwt);
        expect(result.response?.valid ?? false, `valid: ${jwt.slice(0, 60)}`).toBe(false);
      }

      // Below the client library: a body that is no protobuf, and one past the size limit.
      const session = await rawSession(port);
      try {
        for (const [method, body] of [
          ['GenerateJwt', grpcFrame(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]))],
          ['VerifyJwt', grpcFrame(Buffer.from('not a protobuf at all', 'utf8'))],
          ['GenerateJwt', grpcFrame(Buffer.alloc(128 * 1024, 0x0a))],
        ] as const) {
          const result = await rawUnary(session, method, body);
          errors.push(`raw ${method}: status ${result.grpcStatus} ${result.grpcMessage ?? ''} ${result.error ?? ''}`);
          expect(result.grpcStatus, `raw ${method} answered OK`).not.toBe(0);
        }
      } finally {
        session.destroy();
      }
    } finally {
      for (const client of clients) client.close();
    }
    return { seen, errors };
  }

  const cells = [
    [1, 'text'],
    [2, 'text'],
    [1, 'json'],
    [2, 'json'],
  ] as const;
  for (const [transport, [workers, format]] of TRANSPORTS.flatMap((t) => cells.map((cell) => [t, cell] as const))) {
    const mode = `${transport}, ${workers === 1 ? 'single process' : `cluster of ${workers}`}, ${format} logs`;
    it(`${mode}: every RPC, bad input, a reload, /metrics and a SIGTERM shutdown leak no key material and no token`, async () => {
      const args = [...transportArgs(transport), '--log-format', format, '--metrics-port', '0'];
      const server = await fixture.serve({ workers, graceMs: 2000, keysFile, args });
      const { seen, errors } = await exercise(server.port);
      const from = server.stderr.length;
      server.signal('SIGHUP');
      await server.waitFor('stderr', /keys reloaded/, 15_000, from);
      const metrics = await httpGet(bannerMetricsPort(server.stdout));
      expect(metrics.status).toBe(200);
      server.signal('SIGTERM');
      const exit = await server.closed;
      expect(exit.code).toBe(0);

      const logs = `${server.stdout}\n${server.stderr}\n${metrics.body}`;
      const clientSide = [...seen, ...errors].join('\n');
      console.log(
        `secrets, ${mode}: ${logs.length} bytes of stdout+stderr+metrics, ${seen.length} answers and ${errors.length} errors seen by clients, ` +
          `${secrets.length} secret forms and ${issued.size} issued tokens searched`,
      );
      expect(findLeaks(logs, secrets), 'key material in stdout/stderr').toEqual([]);
      expect(findLeaks(clientSide, secrets), 'key material in answers or errors').toEqual([]);
      const tokenNeedles = [...issued].map((value, i) => ({ what: `issued token ${i + 1}`, value }));
      expect(findLeaks(logs, tokenNeedles), 'issued tokens in stdout/stderr').toEqual([]);
      expect(findLeaks(errors.join('\n'), tokenNeedles), 'issued tokens in error messages').toEqual([]);
      expect(logs.match(JWT_PATTERN) ?? [], 'JWT-shaped strings in stdout/stderr').toEqual([]);
      expect(PRIVATE_PATTERNS.filter((re) => re.test(logs)).map(String), 'private JWK members or PEM in stdout/stderr').toEqual([]);
    }, 60_000);
  }

  it('a broken key file holding secrets fails without quoting them', async () => {
    const full = readFileSync(keysFile, 'utf8');
    const broken: [string, string][] = [
      ['truncated JSON', full.slice(0, Math.floor(full.length / 2))],
      ['oct key under an EC algorithm', full.replace('"alg":"HS256"', '"alg":"ES256"')],
      ['EC key under HS256', full.replace('"alg":"ES256"', '"alg":"HS256"')],
      ['unknown member type', full.replace('"kty":"oct"', '"kty":7')],
    ];
    for (const [what, text] of broken) {
      const file = join(fixture.dir, 'broken.json');
      writeFileSync(file, text, { mode: 0o600 });
      for (const workers of [1, 2]) {
        const cli = launchCli(serveArgs('--keys', file), { env: { NODEMAXPROCS: String(workers) } });
        const exit = await within(cli.closed, 15_000);
        const output = `${cli.stdout}\n${cli.stderr}`;
        cli.kill();
        expect(exit?.code, `${what} (workers ${workers}) did not fail: ${output}`).not.toBe(0);
        expect(findLeaks(output, secrets), `${what} (workers ${workers}): ${output}`).toEqual([]);
      }
    }
  }, 90_000);

  it('a secret pasted into any member of a key file entry never reaches stderr: errors name the member by its place', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
    const pasted = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }).d as string;
    const signer = {
      ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }),
      kid: 'signer',
      alg: 'ES256',
    };
    const entry = { ...ec, kid: 'second', alg: 'ES256', use: 'sig', key_ops: ['sign'] };
    for (const member of [...Object.keys(entry), 'deactivated_at', 'pemFile', 'pem', 'note']) {
      const broken = { ...entry, [member]: pasted };
      // A kid that loads is public (GetJwks lists it): the failure that would quote it is a kid given twice.
      const file = join(fixture.dir, 'pasted.json');
      writeFileSync(file, JSON.stringify({ keys: member === 'kid' ? [signer, broken, broken] : [signer, broken] }), { mode: 0o600 });
      const cli = launchCli(serveArgs('--keys', file));
      await Promise.race([cli.closed, cli.waitFor('stdout', /subjects: /, 15_000).catch(() => undefined)]);
      cli.kill();
      await cli.closed;
      expect(cli.stderr, member).not.toContain(pasted);
      if (cli.exit?.code !== 0 && cli.exit?.signal === null) expect(cli.stderr, member).toMatch(/keys\[[12]\]/);
    }
  }, 120_000);

  it('a broken key file on reload fails without quoting its secrets', async () => {
    const file = join(fixture.dir, 'reloaded.json');
    const full = readFileSync(keysFile, 'utf8');
    writeFileSync(file, full, { mode: 0o600 });
    const server = await fixture.serve({ workers: 2, graceMs: 2000, keysFile: file, args: ['--log-format', 'json'] });
    for (const text of [
      full.slice(0, Math.floor(full.length / 2)),
      full.replace('"alg":"ES256"', '"alg":"HS256"'),
      full.replace('"kty":"oct"', '"kty":7'),
    ]) {
      const from = server.stderr.length;
      writeFileSync(file, text, { mode: 0o600 });
      server.signal('SIGHUP');
      await server.waitFor('stderr', /key reload failed/, 15_000, from);
    }
    server.signal('SIGTERM');
    expect((await server.closed).code).toBe(0);
    expect(findLeaks(`${server.stdout}\n${server.stderr}`, secrets), server.stderr).toEqual([]);
  }, 60_000);

  it('jwt-grpc keys generate, rotate and public print kids and public keys, never key material', async () => {
    const file = join(fixture.dir, 'cli-keys.json');
    const outputs: string[] = [];
    const run = async (args: string[], code = 0): Promise<string> => {
      const result = await runCli(['keys', ...args]);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(code);
      outputs.push(result.stdout, result.stderr);
      return result.stdout;
    };
    /** Every private member of every key the file has held. */
    const held: Needle[] = [];
    const remember = (): void => {
      const entries = (JSON.parse(readFileSync(file, 'utf8')) as { keys: Record<string, unknown>[] }).keys;
      for (const entry of entries) {
        for (const member of ['d', 'k', 'p', 'q', 'dp', 'dq', 'qi']) {
          if (typeof entry[member] === 'string') held.push(...forms(`${entry['kid']} ${member}`, entry[member] as string));
        }
      }
    };
    await run(['generate', '--alg', 'HS256', '--alg', 'ES256', '--alg', 'RS256', '--alg', 'EdDSA', '--out', file]);
    remember();
    await run(['rotate', '--keys', file, '--alg', 'ES256', '--stage']);
    remember();
    const staged = (JSON.parse(readFileSync(file, 'utf8')) as { keys: { kid: string }[] }).keys[0]?.kid as string;
    await run(['rotate', '--keys', file, '--activate', staged]);
    await run(['rotate', '--keys', file, '--alg', 'HS256']);
    remember();
    const deactivated = (JSON.parse(readFileSync(file, 'utf8')) as { keys: { kid: string; deactivated_at?: string }[] }).keys.filter(
      (key) => key.deactivated_at !== undefined,
    );
    await run(['rotate', '--keys', file, '--retire', deactivated[0]?.kid as string], 1);
    await run(['rotate', '--keys', file, '--retire', deactivated[0]?.kid as string, '--force']);
    await run(['generate', '--alg', 'HS256', '--out', file], 1);
    const printed = await run(['public', '--keys', file]);
    const all = outputs.join('\n');
    console.log(`secrets, keys commands: ${all.length} bytes of output, ${held.length} secret forms searched`);
    expect(held.length).toBeGreaterThan(0);
    expect(findLeaks(all, held), 'key material in the output of jwt-grpc keys').toEqual([]);
    expect(PRIVATE_PATTERNS.filter((re) => re.test(all)).map(String), 'private JWK members in the output of jwt-grpc keys').toEqual([]);
    const published = JSON.parse(printed) as { keys: Record<string, unknown>[] };
    expect(published.keys.length).toBeGreaterThan(0);
    for (const key of published.keys) expect(key['alg']).not.toMatch(/^HS/);
  }, 90_000);
});
