/**
 * Rotation as edits of a key file's entries (src/keys/rotation.ts): stage, activate, retire,
 * each leaving its input as it was, and retire refused while tokens of the key may be valid;
 * and the same phases on a key file through jwt-grpc/keys' rotateKeyFile.
 */
import { Buffer } from 'node:buffer';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { KeyFileEntry } from '../../src/keys/file.js';
import { activateKey, addActiveKey, retireKey, rfc3339, stageKey } from '../../src/keys/rotation.js';
import { createSigner, exportKeys, generateKeys, importKeys, loadKeys, rotateKeyFile, silentLogger } from '../../src/lib/index.js';

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5) / 1000;

/** Entries `kid`s of one HS256 secret each (only the members rotation reads matter here). */
async function entries(...kids: string[]): Promise<KeyFileEntry[]> {
  const [jwk] = exportKeys(await generateKeys({ algorithms: ['HS256'] }), { includePrivate: true }).keys;
  return kids.map((kid) => ({ ...jwk, kid }) as KeyFileEntry);
}

describe('rfc3339', () => {
  it('writes UTC to the second', () => {
    expect(rfc3339(NOW)).toBe('2026-01-02T03:04:05Z');
    expect(rfc3339(NOW + 0.75)).toBe('2026-01-02T03:04:05Z');
  });
});

describe('stage, activate, retire', () => {
  it('stages a key first and verify-only, leaving the input as it was', async () => {
    const [old, next] = await entries('old', 'next');
    const before = [old as KeyFileEntry];
    const staged = stageKey(before, next as KeyFileEntry);
    expect(staged.map((e) => [e.kid, e['key_ops']])).toEqual([
      ['next', ['verify']],
      ['old', undefined],
    ]);
    expect(before).toEqual([old]);
    expect(next).not.toHaveProperty('key_ops');
  });

  it('activates a staged key and deactivates the signers of its algorithm, stamped now', async () => {
    const file = stageKey(await entries('old'), (await entries('next'))[0] as KeyFileEntry);
    const current = importKeys({ keys: file });
    const activated = activateKey(file, 'next', current, NOW);
    expect(activated.map((e) => [e.kid, e['key_ops'], e['deactivated_at']])).toEqual([
      ['next', undefined, undefined],
      ['old', ['verify'], '2026-01-02T03:04:05Z'],
    ]);
    expect(importKeys({ keys: activated }).keys.map((k) => [k.kid, k.active])).toEqual([
      ['next', true],
      ['old', false],
    ]);
    expect(file[0]?.['key_ops'], 'input unchanged').toEqual(['verify']);
  });

  it('leaves signers of other algorithms and keys already deactivated as they are', async () => {
    const [hs] = await entries('hs');
    const [es] = exportKeys(await generateKeys({ algorithms: ['ES256'] }), { includePrivate: true }).keys as KeyFileEntry[];
    const retired = { ...(hs as KeyFileEntry), kid: 'hs-old', key_ops: ['verify'], deactivated_at: '2025-01-01T00:00:00Z' };
    const file = [{ ...(es as KeyFileEntry), kid: 'es' }, hs as KeyFileEntry, retired];
    const next = (await entries('hs-new'))[0] as KeyFileEntry;
    const out = addActiveKey(file, next, importKeys({ keys: file }), NOW);
    expect(out.map((e) => [e.kid, e['deactivated_at']])).toEqual([
      ['hs-new', undefined],
      ['es', undefined],
      ['hs', '2026-01-02T03:04:05Z'],
      ['hs-old', '2025-01-01T00:00:00Z'],
    ]);
  });

  it('refuses to activate or retire a kid the file does not hold, naming it', async () => {
    const file = await entries('a');
    const current = importKeys({ keys: file });
    expect(() => activateKey(file, 'b', current, NOW)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_KEY', field: 'b', message: 'no key with kid "b" in the key file' }),
    );
    expect(() => retireKey(file, 'b', current, { nowSeconds: NOW, waitSeconds: 0, force: true })).toThrow(
      'no key with kid "b" in the key file',
    );
  });

  it('refuses to retire the active signer, even with force', async () => {
    const file = await entries('a');
    const current = importKeys({ keys: file });
    expect(() => retireKey(file, 'a', current, { nowSeconds: NOW, waitSeconds: 0, force: true })).toThrow(
      'key a is the active HS256 signer: activate another HS256 key first',
    );
  });

  it('retires a deactivated key only once its tokens have expired, or with force', async () => {
    const [a, b] = await entries('a', 'b');
    const file = [a as KeyFileEntry, { ...(b as KeyFileEntry), key_ops: ['verify'], deactivated_at: rfc3339(NOW - 100) }];
    const current = importKeys({ keys: file });
    const options = { nowSeconds: NOW, waitSeconds: 100, force: false };
    expect(retireKey(file, 'b', current, options).map((e) => e.kid)).toEqual(['a']);
    expect(() => retireKey(file, 'b', current, { ...options, waitSeconds: 101 })).toThrow(
      'key b stopped signing at 2026-01-02T03:02:25Z; tokens it signed may be valid until 2026-01-02T03:04:06Z (--max-ttl plus the clock tolerance, 101 s): retire it after that, or now with --force',
    );
    expect(retireKey(file, 'b', current, { ...options, waitSeconds: 101, force: true }).map((e) => e.kid)).toEqual(['a']);
  });

  it('refuses to retire a key without deactivated_at unless forced', async () => {
    const [a, b] = await entries('a', 'b');
    const file = [a as KeyFileEntry, { ...(b as KeyFileEntry), key_ops: ['verify'] }];
    const current = importKeys({ keys: file });
    expect(() => retireKey(file, 'b', current, { nowSeconds: NOW, waitSeconds: 0, force: false })).toThrow(/key b has no deactivated_at/);
    expect(retireKey(file, 'b', current, { nowSeconds: NOW, waitSeconds: 0, force: true })).toHaveLength(1);
  });
});

describe('rotateKeyFile: the phases of `keys rotate` on a key file, from code', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-rotate-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A key file of one ES256 signer, `old`. */
  async function keyFile(name: string): Promise<string> {
    const file = join(dir, name);
    const [jwk] = exportKeys(await generateKeys({ algorithms: ['ES256'] }), { includePrivate: true }).keys;
    writeFileSync(file, JSON.stringify({ keys: [{ ...jwk, kid: 'old' }] }), { mode: 0o600 });
    return file;
  }

  it('stages, activates and retires; servers that load the file sign with the new key and verify the old', async () => {
    const file = await keyFile('phases.json');
    const staged = await rotateKeyFile(file, { phase: 'stage', algorithm: 'ES256' }, { logger: silentLogger });
    expect(staged.kid).toMatch(/^es256-\d{8}-[0-9a-f]{8}$/);
    expect((await loadKeys(file, { logger: silentLogger })).activeEntry('ES256')?.kid).toBe('old');

    const activated = await rotateKeyFile(file, { phase: 'activate', kid: staged.kid }, { logger: silentLogger });
    expect(activated).toMatchObject({ kid: staged.kid, deactivated: 'old' });
    const keys = await loadKeys(file, { logger: silentLogger });
    const { token } = createSigner(keys).sign('ES256', { sub: 'ada', aud: 'api', exp: Math.floor(Date.now() / 1000) + 60 });
    expect(JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString())).toMatchObject({ kid: staged.kid });
    expect(keys.keys.find((key) => key.kid === 'old')).toMatchObject({ canSign: false, deactivatedAt: expect.any(Number) });

    await expect(rotateKeyFile(file, { phase: 'retire', kid: 'old', waitSeconds: 7200 }, { logger: silentLogger })).rejects.toMatchObject({
      code: 'ERR_INVALID_KEY',
      message: expect.stringMatching(/^key old stopped signing at /),
    });
    const retired = await rotateKeyFile(file, { phase: 'retire', kid: 'old', waitSeconds: 7200, force: true }, { logger: silentLogger });
    expect(retired.after.keys.map((key) => key.kid)).toEqual([staged.kid]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses a bad step naming it, and leaves the file as it was', async () => {
    const file = await keyFile('refused.json');
    const before = readFileSync(file, 'utf8');
    const step = JSON.parse('{ "phase": "activate", "kd": "old" }');
    await expect(rotateKeyFile(file, step)).rejects.toMatchObject({ code: 'ERR_INVALID_OPTION', field: 'step.kd' });
    await expect(rotateKeyFile(file, JSON.parse('{ "phase": "promote", "kid": "old" }'))).rejects.toMatchObject({
      code: 'ERR_INVALID_OPTION',
      field: 'step.phase',
    });
    await expect(rotateKeyFile(file, { phase: 'activate', kid: 'missing' }, { logger: silentLogger })).rejects.toMatchObject({
      code: 'ERR_INVALID_KEY',
      message: 'no key with kid "missing" in the key file',
    });
    // The only signer of ES256 cannot go: the file would sign ES256 no more.
    await expect(
      rotateKeyFile(file, { phase: 'retire', kid: 'old', waitSeconds: 0, force: true }, { logger: silentLogger }),
    ).rejects.toMatchObject({
      code: 'ERR_INVALID_KEY',
    });
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
