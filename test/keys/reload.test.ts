/**
 * The key reloader (src/keys/reload.ts): a reload that loads and can take over is applied,
 * logged by kid and counted; one that fails changes nothing, says why once, and is counted
 * as a failure; reloads run one at a time in the order asked.
 */
import { describe, expect, it } from 'vitest';
import { KeyReloader, describeKeys } from '../../src/keys/reload.js';
import { type KeySet, type Logger, exportKeys, generateKeys, importKeys } from '../../src/lib/index.js';

/** A logger that keeps its lines. */
function recordingLogger(): Logger & { lines: { level: string; message: string; fields?: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void lines.push({ level, message, ...(fields && { fields }) });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

function reloaderOver(initial: KeySet) {
  let current = initial;
  const logger = recordingLogger();
  const metrics = { reloads: 0, failures: 0 };
  const applied: KeySet[] = [];
  const reloader = new KeyReloader({
    current: () => current,
    apply: (keys) => {
      applied.push(keys);
      current = keys;
    },
    logger,
    metrics,
  });
  return { reloader, logger, metrics, applied, current: () => current };
}

describe('describeKeys', () => {
  it('names each key by kid, algorithm and role, never material', async () => {
    const keys = await generateKeys({ algorithms: ['HS256'] });
    const [jwk] = exportKeys(keys, { includePrivate: true }).keys;
    const set = importKeys({
      keys: [
        { ...jwk, kid: 'new' },
        { ...jwk, kid: 'staged', key_ops: ['verify'] },
        { ...jwk, kid: 'old', key_ops: ['verify'], deactivated_at: '2026-01-01T00:00:00Z' },
      ],
    });
    expect(describeKeys(set)).toEqual(['new (HS256, signs)', 'staged (HS256, verify-only)', 'old (HS256, deactivated)']);
    expect(describeKeys(set).join()).not.toContain(String(jwk?.k));
  });
});

describe('KeyReloader', () => {
  it('applies keys that load and can take over, logs their kids and counts the reload', async () => {
    const { reloader, logger, metrics, applied } = reloaderOver(await generateKeys({ algorithms: ['HS256'] }));
    const next = await generateKeys({ algorithms: ['HS256', 'ES256'] });
    await expect(reloader.reload(async () => next)).resolves.toBe(next);
    expect(applied).toEqual([next]);
    expect(metrics).toEqual({ reloads: 1, failures: 0 });
    expect(logger.lines).toEqual([{ level: 'info', message: 'keys reloaded', fields: { keys: describeKeys(next) } }]);
  });

  it('keeps the keys in use when a load fails or would lose an algorithm, one error line each', async () => {
    const initial = await generateKeys({ algorithms: ['HS256'] });
    const { reloader, logger, metrics, applied, current } = reloaderOver(initial);
    await expect(reloader.reload(async () => Promise.reject(new Error('key file keys.json is not valid JSON')))).rejects.toThrow(
      /not valid JSON/,
    );
    const lost = await generateKeys({ algorithms: ['ES256'] });
    await expect(reloader.reload(async () => lost)).rejects.toMatchObject({ code: 'ERR_INVALID_KEY' });
    expect(applied).toEqual([]);
    expect(current()).toBe(initial);
    expect(metrics).toEqual({ reloads: 0, failures: 2 });
    expect(logger.lines.map((line) => [line.level, line.message])).toEqual([
      ['error', 'key reload failed, keeping the keys in use: key file keys.json is not valid JSON'],
      ['error', expect.stringMatching(/^key reload failed, keeping the keys in use: no key could sign HS256 any more/)],
    ]);
  });

  it('runs reloads one at a time, in the order asked, and a failure does not stop the next', async () => {
    const { reloader } = reloaderOver(await generateKeys({ algorithms: ['HS256'] }));
    const [a, b] = await Promise.all([generateKeys({ algorithms: ['HS256'] }), generateKeys({ algorithms: ['HS256'] })]);
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = reloader.reload(async () => {
      order.push('first starts');
      await gate;
      order.push('first ends');
      return a;
    });
    const failing = reloader.reload(async () => {
      order.push('second');
      throw new Error('unreadable');
    });
    const third = reloader.reload(async () => {
      order.push('third');
      return b;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['first starts']);
    release();
    await expect(first).resolves.toBe(a);
    await expect(failing).rejects.toThrow('unreadable');
    await expect(third).resolves.toBe(b);
    expect(order).toEqual(['first starts', 'first ends', 'second', 'third']);
  });
});
