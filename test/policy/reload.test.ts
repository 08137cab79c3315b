/**
 * The policy reloader (src/policy/reload.ts): each applied policy gets the next generation
 * and a digest in the log line; a failed load or apply keeps the generation and the policy
 * in use, logs one error and counts it; reloads run in order.
 */
import { describe, expect, it } from 'vitest';
import type { JwtPolicy } from '../../src/policy/document.js';
import { PolicyReloader, describePolicy, policyDigest } from '../../src/policy/reload.js';

const A: JwtPolicy = { callers: { 'dns:a': { subjects: ['a'] } } };
const B: JwtPolicy = { callers: { 'dns:a': { subjects: ['a'] }, 'dns:b': { subjects: ['b'] } } };

function reloader(apply: (policy: JwtPolicy, generation: number) => void = () => undefined) {
  const lines: [string, string, unknown][] = [];
  const logger = {
    info: (message: string, fields?: unknown) => void lines.push(['info', message, fields]),
    warn: (message: string, fields?: unknown) => void lines.push(['warn', message, fields]),
    error: (message: string, fields?: unknown) => void lines.push(['error', message, fields]),
  };
  const metrics = { reloads: 0, failures: 0 };
  return { lines, metrics, reloader: new PolicyReloader({ apply, logger, metrics }) };
}

describe('policyDigest and describePolicy', () => {
  it('are short, stable and differ between policies; callers are counted, never listed', () => {
    expect(policyDigest(A)).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(policyDigest({ callers: { 'dns:a': { subjects: ['a'] } } })).toBe(policyDigest(A));
    expect(policyDigest(B)).not.toBe(policyDigest(A));
    expect(describePolicy(B, 3)).toEqual({ policyGeneration: 3, policyDigest: policyDigest(B), callers: 2 });
  });
});

describe('PolicyReloader', () => {
  it('applies each policy with the next generation, logging and counting it', async () => {
    const applied: [JwtPolicy, number][] = [];
    const { reloader: r, lines, metrics } = reloader((policy, generation) => void applied.push([policy, generation]));
    await expect(r.reload(async () => A)).resolves.toBe(A);
    await r.reload(async () => B);
    expect(applied).toEqual([
      [A, 1],
      [B, 2],
    ]);
    expect(metrics).toEqual({ reloads: 2, failures: 0 });
    expect(lines).toEqual([
      ['info', 'policy reloaded', describePolicy(A, 1)],
      ['info', 'policy reloaded', describePolicy(B, 2)],
    ]);
  });

  it('keeps the generation when a load or an apply fails, with one error line each', async () => {
    let failApply = true;
    const applied: number[] = [];
    const {
      reloader: r,
      lines,
      metrics,
    } = reloader((_policy, generation) => {
      if (failApply) throw new Error('a worker refused it');
      applied.push(generation);
    });
    await expect(r.reload(async () => Promise.reject(new Error('policy file p.json: $.callers: is required')))).rejects.toThrow(
      '$.callers',
    );
    await expect(r.reload(async () => A)).rejects.toThrow('a worker refused it');
    failApply = false;
    await r.reload(async () => A);
    expect(applied, 'the failures used no generation').toEqual([1]);
    expect(metrics).toEqual({ reloads: 1, failures: 2 });
    expect(lines.slice(0, 2)).toEqual([
      ['error', 'policy reload failed, keeping the policy in use: policy file p.json: $.callers: is required', undefined],
      ['error', 'policy reload failed, keeping the policy in use: a worker refused it', undefined],
    ]);
  });

  it('runs reloads one at a time, in the order asked', async () => {
    const order: string[] = [];
    const { reloader: r } = reloader((policy) => void order.push(`apply ${Object.keys(policy.callers).length}`));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = r.reload(async () => {
      await gate;
      return A;
    });
    const second = r.reload(async () => B);
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['apply 1', 'apply 2']);
  });
});
