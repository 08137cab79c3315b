/**
 * `jwt-grpc serve` with a degenerate key: a key file holding an RSA key with e = 1 (for
 * which anyone can forge `sub: root, role: admin`) stops the server from starting, with one
 * line naming the kid and the reason; the same key arriving by a SIGHUP reload changes
 * nothing but an error line, and the forged token never verifies.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runCli, serveArgs, startCli } from '../../bench/kit/cli.js';
import { killAll } from '../../bench/kit/launcher.js';
import { ClientPool } from '../../bench/kit/grpc-clients.js';
import { TRANSPORTS, transportArgs } from '../../bench/kit/jwt-servers.js';
import { forgedRs256Token, rsaJwkWithExponent } from '../keys/degenerate-helpers.js';
import { jsonLines, waitForReloadFailure } from '../ops/reload-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-degenerate-cli-'));
const clients = new ClientPool();

afterEach(async () => {
  clients.closeAll();
  await killAll();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hs = { kty: 'oct', k: randomBytes(32).toString('base64url'), kid: 'hs-good', alg: 'HS256' };
const n = String(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' }).n);
const e1 = { ...rsaJwkWithExponent(n, 1n), kid: 'rs-e1', alg: 'RS256' };
const REFUSAL = 'keys[1] (kid "rs-e1"): RS256 public exponent 1 is below 65537';

function keyFile(name: string, keys: readonly object[]): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify({ keys }), { mode: 0o600 });
  return file;
}

function forged(): string {
  const now = Math.floor(Date.now() / 1000);
  return forgedRs256Token('rs-e1', { sub: 'root', role: 'admin', iat: now, exp: now + 600 });
}

describe.each(TRANSPORTS)('serve on %s with an RSA key whose exponent is 1', (transport) => {
  it('refuses to start, with one line naming the kid and the reason', async () => {
    const result = await runCli(serveArgs('--keys', keyFile(`start-${transport}.json`, [hs, e1]), ...transportArgs(transport)));
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([`jwt-grpc: ${REFUSAL}`]);
    expect(result.stdout).not.toContain('listening');
    expect(result.stderr).not.toContain(n.slice(0, 40));
  });

  it('refuses it on a SIGHUP reload: the old keys stay, one error line, and the forged token does not verify', async () => {
    const file = keyFile(`reload-${transport}.json`, [hs]);
    const cli = await startCli(serveArgs('--keys', file, '--log-format', 'json', ...transportArgs(transport)));
    const client = clients.jwt(cli.port);
    expect(await client.verifyJwt({ jwt: forged() })).toMatchObject({ valid: false, reason: 'UNKNOWN_KEY' });

    const from = cli.stderr.length;
    keyFile(`reload-${transport}.json`, [hs, e1]);
    cli.signal('SIGHUP');
    expect(await waitForReloadFailure(cli, from)).toBe(`key reload failed, keeping the keys in use: ${REFUSAL}`);
    expect(jsonLines(cli, from).filter((line) => line['level'] !== 'info')).toHaveLength(1);

    expect(await client.verifyJwt({ jwt: forged() })).toMatchObject({ valid: false, reason: 'UNKNOWN_KEY' });
    const made = await client.generateJwt({ algorithm: 'HS256', subject: 'after@example.com' });
    expect(made.kid).toBe('hs-good');
    expect(await client.verifyJwt({ jwt: made.jwt })).toMatchObject({ valid: true });
  });
});
