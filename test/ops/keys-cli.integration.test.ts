/**
 * `jwt-grpc keys`: a key file made from the command line, rotated in phases (the file's
 * entries after each), refusals that leave the file as it was, and the public JWK Set.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../bench/kit/cli.js';
import { loadKeys, silentLogger } from '../../src/lib/index.js';
import { keyEntries } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-keys-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
const newFile = (): string => join(dir, `keys-${++files}.json`);

async function keys(...args: string[]) {
  return runCli(['keys', ...args]);
}

async function ok(...args: string[]): Promise<string> {
  const result = await keys(...args);
  expect(result.code, `jwt-grpc keys ${args.join(' ')}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

const KID = /^(es256|hs256|eddsa)-\d{8}-[0-9a-f]{8}$/;

describe('keys generate', () => {
  it('writes new private keys, mode 0600, with readable unique kids, and prints the kids only', async () => {
    const file = newFile();
    const out = await ok('generate', '--alg', 'ES256', '--alg', 'HS256', '--alg', 'EdDSA', '--out', file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const entries = keyEntries(file);
    expect(entries.map((entry) => entry['alg'])).toEqual(['ES256', 'HS256', 'EdDSA']);
    const today = new Date().toISOString().slice(0, 10).replaceAll('-', '');
    for (const entry of entries) {
      expect(entry['kid']).toMatch(KID);
      expect(entry['kid']).toContain(today);
      expect(out).toContain(entry['kid'] as string);
    }
    expect(entries[0]?.['d'] ?? '').not.toBe('');
    for (const secret of entries.flatMap((entry) => [entry['d'], entry['k']]).filter((v) => typeof v === 'string')) {
      expect(out).not.toContain(secret as string);
    }
    const loaded = await loadKeys(file, { logger: silentLogger });
    expect([...loaded.signingAlgorithms].sort()).toEqual(['ES256', 'EdDSA', 'HS256']);
  });

  it('refuses to overwrite a file without --force, and replaces it with', async () => {
    const file = newFile();
    await ok('generate', '--alg', 'ES256', '--out', file);
    const before = readFileSync(file, 'utf8');
    const refused = await keys('generate', '--alg', 'HS256', '--out', file);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/exists \(--force replaces it\)/);
    expect(readFileSync(file, 'utf8')).toBe(before);
    await ok('generate', '--alg', 'HS256', '--out', file, '--force');
    expect(keyEntries(file).map((entry) => entry['alg'])).toEqual(['HS256']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('takes --kid, one per --alg', async () => {
    const file = newFile();
    await ok('generate', '--alg', 'ES256', '--alg', 'HS256', '--kid', 'sig-2026', '--kid', 'mac-2026', '--out', file);
    expect(keyEntries(file).map((entry) => entry['kid'])).toEqual(['sig-2026', 'mac-2026']);
  });

  it.each([
    ['no --alg', ['generate', '--out', 'x.json'], /--alg/],
    ['an unknown algorithm', ['generate', '--alg', 'HS999', '--out', 'x.json'], /--alg: must be one of/],
    ['no --out', ['generate', '--alg', 'ES256'], /--out: is required/],
    ['kids not matching the algorithms', ['generate', '--alg', 'ES256', '--alg', 'HS256', '--kid', 'a', '--out', 'x.json'], /--kid/],
    ['an unknown flag', ['generate', '--alg', 'ES256', '--out', 'x.json', '--stage'], /--stage/],
    ['two phases', ['rotate', '--keys', 'x.json', '--stage', '--retire', 'k'], /one phase at a time/],
    ['rotate without --alg', ['rotate', '--keys', 'x.json'], /--alg: is required/],
    ['rotate without --keys', ['rotate', '--alg', 'ES256'], /--keys: is required/],
    ['an unknown keys command', ['export'], /unknown keys command/],
  ])('%s exits 2 naming the problem', async (_, args, message) => {
    const result = await keys(...(args as string[]));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain('jwt-grpc keys --help');
  });
});

describe('keys rotate', () => {
  it('stages, activates and retires in phases, the file loadable and mode 0600 after each', async () => {
    const file = newFile();
    await ok('generate', '--alg', 'ES256', '--alg', 'HS256', '--out', file);
    const [oldEs, hs] = keyEntries(file).map((entry) => entry['kid'] as string) as [string, string];

    const staged = await ok('rotate', '--keys', file, '--alg', 'ES256', '--stage');
    const newEs = keyEntries(file)[0]?.['kid'] as string;
    expect(newEs).toMatch(KID);
    expect(staged).toContain(`staged ${newEs} (ES256, verify-only)`);
    // The next command, in the form that runs in an install folder (the bin is not on PATH there).
    expect(staged).toContain(`\n  npx jwt-grpc keys rotate --keys ${file} --activate ${newEs}\n`);
    expect(keyEntries(file)[0]?.['key_ops']).toEqual(['verify']);
    let loaded = await loadKeys(file, { logger: silentLogger });
    expect(loaded.activeEntry('ES256')?.kid).toBe(oldEs);
    expect(loaded.keys.find((key) => key.kid === newEs)).toMatchObject({ active: false, canSign: false });

    const activated = await ok('rotate', '--keys', file, '--activate', newEs);
    expect(activated).toContain(`\n  npx jwt-grpc keys rotate --keys ${file} --retire ${oldEs}`);
    loaded = await loadKeys(file, { logger: silentLogger });
    expect(loaded.activeEntry('ES256')?.kid).toBe(newEs);
    expect(loaded.activeEntry('HS256')?.kid).toBe(hs);
    const old = keyEntries(file).find((entry) => entry['kid'] === oldEs);
    expect(old?.['key_ops']).toEqual(['verify']);
    expect(old?.['deactivated_at']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(Math.abs(Date.parse(old?.['deactivated_at'] as string) - Date.now())).toBeLessThan(60_000);
    expect(old?.['d'], 'a deactivated key keeps its private part: it is verify-only by its members').toBeDefined();

    // Retiring: refused while tokens of the old key may be valid, and for the active signer.
    const early = await keys('rotate', '--keys', file, '--retire', oldEs);
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/may be valid until .*--max-ttl/);
    const active = await keys('rotate', '--keys', file, '--retire', newEs, '--force');
    expect(active.code).toBe(1);
    expect(active.stderr).toMatch(/active ES256 signer/);
    expect(keyEntries(file)).toHaveLength(3);

    // Once deactivated_at + --max-ttl + 5 s tolerance has passed, it goes.
    const entries = keyEntries(file).map((entry) =>
      entry['kid'] === oldEs ? { ...entry, deactivated_at: '2020-01-01T00:00:00Z' } : entry,
    );
    writeFileSync(file, JSON.stringify({ keys: entries }), { mode: 0o600 });
    const notYet = await keys('rotate', '--keys', file, '--retire', oldEs, '--max-ttl', String(10 * 365 * 86_400));
    expect(notYet.code, 'a ten-year lifetime is not over').toBe(1);
    expect(await ok('rotate', '--keys', file, '--retire', oldEs, '--max-ttl', '3600')).toContain(`retired ${oldEs}`);
    expect(keyEntries(file).map((entry) => entry['kid'])).toEqual([newEs, hs]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('rotate without a phase stages and activates at once; --force retires a key whose last use is unknown', async () => {
    const file = newFile();
    await ok('generate', '--alg', 'HS256', '--kid', 'hs-old', '--out', file);
    const out = await ok('rotate', '--keys', file, '--alg', 'HS256', '--kid', 'hs-new');
    expect(out).toContain('added hs-new (HS256, signs)');
    expect(out).toContain('deactivated hs-old');
    const loaded = await loadKeys(file, { logger: silentLogger });
    expect(loaded.activeEntry('HS256')?.kid).toBe('hs-new');
    // A verify-only key with no deactivated_at: nothing says when it last signed.
    const entries = keyEntries(file).map((entry) => (entry['kid'] === 'hs-old' ? { ...entry, deactivated_at: undefined } : entry));
    writeFileSync(file, JSON.stringify({ keys: entries.map((entry) => JSON.parse(JSON.stringify(entry)) as unknown) }), { mode: 0o600 });
    const refused = await keys('rotate', '--keys', file, '--retire', 'hs-old');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/no deactivated_at/);
    await ok('rotate', '--keys', file, '--retire', 'hs-old', '--force');
    expect(keyEntries(file).map((entry) => entry['kid'])).toEqual(['hs-new']);
  });

  it('refuses what would not load, and leaves the file as it was', async () => {
    const file = newFile();
    await ok('generate', '--alg', 'ES256', '--kid', 'es-a', '--out', file);
    const before = readFileSync(file, 'utf8');
    for (const [args, message] of [
      [['--activate', 'no-such-kid'], /no key with kid "no-such-kid"/],
      [['--alg', 'ES256', '--stage', '--kid', 'es-a'], /already has a key with kid "es-a"/],
      [['--alg', 'HS256', '--activate', 'es-a'], /es-a is an ES256 key, not HS256/],
    ] as const) {
      const result = await keys('rotate', '--keys', file, ...args);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(message);
      expect(readFileSync(file, 'utf8')).toBe(before);
    }
    // A public key can verify but never sign: activating it is refused.
    const entries = keyEntries(file);
    const { d: _d, ...publicOnly } = entries[0] as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ keys: [...entries, { ...publicOnly, kid: 'es-public', key_ops: ['verify'] }] }), { mode: 0o600 });
    const publicKey = await keys('rotate', '--keys', file, '--activate', 'es-public');
    expect(publicKey.code).toBe(1);
    expect(publicKey.stderr).toMatch(/es-public cannot sign/);
  });
});

describe('keys public', () => {
  it('prints the public JWK Set: no private member, no HMAC key, staged keys included', async () => {
    const file = newFile();
    await ok('generate', '--alg', 'ES256', '--alg', 'HS256', '--alg', 'RS256', '--out', file);
    await ok('rotate', '--keys', file, '--alg', 'ES256', '--stage');
    const printed = JSON.parse(await ok('public', '--keys', file)) as { keys: Record<string, unknown>[] };
    const expected = keyEntries(file)
      .filter((entry) => entry['alg'] !== 'HS256')
      .map((entry) => entry['kid']);
    expect(printed.keys.map((key) => key['kid'])).toEqual(expected);
    for (const key of printed.keys) {
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'key_ops', 'deactivated_at']) expect(key[member], member).toBeUndefined();
      expect(key['use']).toBe('sig');
    }
  });

  it('warns on stderr about a key file others can read', async () => {
    const file = newFile();
    await ok('generate', '--alg', 'ES256', '--out', file);
    chmodSync(file, 0o644);
    const result = await keys('public', '--keys', file);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/readable by group or others/);
    // rotate reads it too, and writes it back 0600.
    const rotated = await keys('rotate', '--keys', file, '--alg', 'ES256', '--stage');
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stderr).toMatch(/readable by group or others/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});
