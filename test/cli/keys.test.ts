/**
 * `jwt-grpc keys` run in process (src/cli/keys.ts): generate writes a key file and names its
 * keys, rotate walks stage, activate and retire (each refusal leaving the file as it was),
 * public prints no private member. test/ops/keys-cli.test.ts runs the same as a process.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseKeysArgs } from '../../src/cli/keys-args.js';
import { runKeysCommand } from '../../src/cli/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-keys-command-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `jwt-grpc keys ...argv` and returns what it printed. */
async function keys(...argv: string[]): Promise<string[]> {
  const args = parseKeysArgs(argv, {});
  if (args.action === 'help') throw new Error('help');
  const printed: string[] = [];
  await runKeysCommand(args, (line) => printed.push(line));
  return printed;
}

const entries = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { keys: Record<string, unknown>[] }).keys;

describe('runKeysCommand', () => {
  it('generates keys under the kids given, and refuses to replace a file without --force', async () => {
    const file = join(dir, 'generated.json');
    expect(await keys('generate', '--alg', 'ES256', '--alg', 'HS256', '--kid', 'es', '--kid', 'hs', '--out', file)).toEqual([
      `wrote ${file} (mode 0600): es (ES256, signs), hs (HS256, signs)`,
    ]);
    expect(entries(file).map((entry) => [entry['kid'], entry['alg']])).toEqual([
      ['es', 'ES256'],
      ['hs', 'HS256'],
    ]);
    await expect(keys('generate', '--alg', 'ES256', '--out', file)).rejects.toMatchObject({
      code: 'ERR_FILE',
      message: `cannot create key file ${file}: it exists (--force replaces it)`,
    });
    const [line] = await keys('generate', '--alg', 'EdDSA', '--out', file, '--force');
    expect(line).toMatch(new RegExp(`^wrote ${file} \\(mode 0600\\): eddsa-\\d{8}-[0-9a-f]{8} \\(EdDSA, signs\\)$`));
  });

  it('stages, activates and retires a key, saying what to do next', async () => {
    const file = join(dir, 'rotated.json');
    await keys('generate', '--alg', 'ES256', '--kid', 'old', '--out', file);
    const staged = await keys('rotate', '--keys', file, '--alg', 'ES256', '--stage', '--kid', 'new');
    expect(staged[0]).toBe(`staged new (ES256, verify-only) in ${file}`);
    expect(staged).toContain(`  npx jwt-grpc keys rotate --keys ${file} --activate new`);
    const activated = await keys('rotate', '--keys', file, '--activate', 'new');
    expect(activated[0]).toBe(`activated new (ES256, signs) in ${file}`);
    expect(activated[1]).toMatch(/^deactivated old \(ES256, verify-only since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$/);
    expect(activated).toContain(`  npx jwt-grpc keys rotate --keys ${file} --retire old`);
    await expect(keys('rotate', '--keys', file, '--retire', 'old')).rejects.toMatchObject({
      code: 'ERR_INVALID_KEY',
      message: expect.stringMatching(/^key old stopped signing at /),
    });
    expect(await keys('rotate', '--keys', file, '--retire', 'old', '--force')).toEqual([
      expect.stringMatching(new RegExp(`^retired old \\(ES256, verify-only since .*\\) from ${file}$`)),
      'next: reload every server (SIGHUP, or --watch-keys notices)',
    ]);
    expect(entries(file).map((entry) => entry['kid'])).toEqual(['new']);
  });

  it('refuses a rotation that would leave an algorithm without a signer, or names the wrong algorithm, file unchanged', async () => {
    const file = join(dir, 'refused.json');
    await keys('generate', '--alg', 'HS256', '--kid', 'hs', '--out', file);
    const before = readFileSync(file, 'utf8');
    await expect(keys('rotate', '--keys', file, '--retire', 'hs', '--force')).rejects.toThrow(
      'key hs is the active HS256 signer: activate another HS256 key first',
    );
    await keys('rotate', '--keys', file, '--alg', 'HS256', '--stage', '--kid', 'hs2');
    const staged = readFileSync(file, 'utf8');
    await expect(keys('rotate', '--keys', file, '--alg', 'ES256', '--activate', 'hs2')).rejects.toMatchObject({
      code: 'ERR_INVALID_KEY',
      message: 'key hs2 is an HS256 key, not ES256',
    });
    await expect(keys('rotate', '--keys', file, '--alg', 'HS256', '--kid', 'hs')).rejects.toThrow(
      'the key file already has a key with kid "hs"',
    );
    expect(readFileSync(file, 'utf8')).toBe(staged);
    expect(staged).not.toBe(before);
  });

  it('refuses to activate a key that cannot sign', async () => {
    const file = join(dir, 'public-only.json');
    await keys('generate', '--alg', 'ES256', '--kid', 'es', '--out', file);
    const [jwk] = entries(file);
    const { d: _d, ...publicJwk } = jwk as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ keys: [jwk, { ...publicJwk, kid: 'pub' }] }), { mode: 0o600 });
    const before = readFileSync(file, 'utf8');
    await expect(keys('rotate', '--keys', file, '--activate', 'pub')).rejects.toThrow(
      'key pub cannot sign: it has no private key (or secret)',
    );
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('prints the public keys only', async () => {
    const file = join(dir, 'public.json');
    await keys('generate', '--alg', 'ES256', '--alg', 'HS256', '--kid', 'es', '--kid', 'hs', '--out', file);
    const [printed] = await keys('public', '--keys', file);
    const published = JSON.parse(printed as string) as { keys: Record<string, unknown>[] };
    expect(published.keys.map((key) => key['kid'])).toEqual(['es']);
    expect(published.keys[0]).not.toHaveProperty('d');
  });
});
