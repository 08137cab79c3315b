/**
 * The observers of JwtService's core (src/jwt-service/observers.ts): how a failed
 * GenerateJwt under a policy is counted and audited (the rule it broke, the request field,
 * or the server's failure: `unavailable` for every error answered UNAVAILABLE), the
 * warning of a key backend that could not sign, with or without a policy, and the audit
 * log's bound: one whole line a second per (caller, decision, rule), then a count, with
 * callers past MAX_AUDIT_GROUPS sharing one group.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JwtGrpcError } from '../../src/base/errors.js';
import { auditObserver, metricsObserver, refusalOf } from '../../src/jwt-service/observers.js';
import type { RefusedEvent } from '../../src/jwt-service/observer.js';
import type { ServiceObserver } from '../../src/metrics/jwt-service-metrics.js';
import { PolicyDenied, RateLimited } from '../../src/policy/enforce.js';
import { AUDIT_SUMMARY_WINDOW_MS, MAX_AUDIT_GROUPS } from '../../src/jwt-service/audit-summary.js';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';

const REQUEST = { subject: 'ada', audience: 'api', ttl_seconds: 0, claims_json: '', algorithm: 'ES256' };

describe('refusalOf', () => {
  it('a policy rule is denied by its rule; a bad request field by request.<field>, an unknown field by request', () => {
    expect(refusalOf(new PolicyDenied('audiences', 'spiffe://a', 'no'))).toEqual({ decision: 'deny', rule: 'audiences' });
    expect(refusalOf(new JwtGrpcError('ERR_INVALID_REQUEST', 'subject: empty', { field: 'subject' }))).toEqual({
      decision: 'deny',
      rule: 'request.subject',
    });
    expect(refusalOf(new JwtGrpcError('ERR_INVALID_REQUEST', 'x', { field: 'anything the caller sent' }))).toEqual({
      decision: 'deny',
      rule: 'request',
    });
  });

  it("every error answered UNAVAILABLE is the server's `unavailable`; anything else `internal`", () => {
    for (const code of ['ERR_STATUS_LIST_FULL', 'ERR_KEY_BACKEND_UNAVAILABLE'] as const) {
      expect(refusalOf(new JwtGrpcError(code, 'down')), code).toEqual({ decision: 'error', rule: 'unavailable' });
    }
    expect(refusalOf(new JwtGrpcError('ERR_SELF_CHECK_FAILED', 'x'))).toEqual({ decision: 'error', rule: 'internal' });
    expect(refusalOf(new TypeError('bug'))).toEqual({ decision: 'error', rule: 'internal' });
  });
});

describe('a refused GenerateJwt', () => {
  const refused = (error: unknown, underPolicy: boolean): RefusedEvent => ({ request: REQUEST, error, underPolicy, granted: undefined });

  it('is audited and counted under a policy only; the audit line gives what the caller was told, never an internal message', () => {
    const logger = recordingLogger();
    const decisions: string[] = [];
    const metrics = {
      policyDecision: (decision: string, rule: string) => decisions.push(`${decision}/${rule}`),
    } as unknown as ServiceObserver;
    for (const observer of [auditObserver(logger, 1024), metricsObserver(metrics)]) {
      observer.onRefused?.(
        refused(new PolicyDenied('subjects', 'spiffe://a', 'caller spiffe://a may not get subject "ada"'), true),
        undefined,
      );
      observer.onRefused?.(refused(new JwtGrpcError('ERR_SELF_CHECK_FAILED', 'self-check of kid k failed'), true), undefined);
      observer.onRefused?.(refused(new JwtGrpcError('ERR_INVALID_REQUEST', 'subject: empty', { field: 'subject' }), false), undefined);
    }
    expect(decisions).toEqual(['deny/subjects', 'error/internal']);
    expect(logger.lines.map((line) => [line.level, (line.fields as { rule: string; reason: string }).reason])).toEqual([
      ['warn', 'policy rule "subjects": caller spiffe://a may not get subject "ada"'],
      ['warn', 'internal error'],
    ]);
  });

  it('by a key backend that could not sign is a warning naming the key, with or without a policy', () => {
    const logger = recordingLogger();
    const down = new JwtGrpcError('ERR_KEY_BACKEND_UNAVAILABLE', 'key hsm-1 (pkcs11) cannot sign: no answer within 2000 ms');
    auditObserver(logger, 1024).onRefused?.(refused(down, false), undefined);
    expect(logger.lines).toEqual([{ level: 'warn', message: down.message, fields: undefined }]);
  });
});

describe('the audit log under a flood', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  const rateLimited = (caller: string): RefusedEvent => ({
    request: REQUEST,
    error: new RateLimited(caller, { perSecond: 1, burst: 1 }),
    underPolicy: true,
    granted: undefined,
  });

  it('writes one whole line a second per caller and decision, then the count it left out; callers past the bound share one group', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let nowMs = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => nowMs);
    const logger = recordingLogger();
    const audit = auditObserver(logger, 1024);
    for (let i = 0; i < 500; i++) audit.onRefused?.(rateLimited('dns:flood'), undefined);
    for (let i = 0; i < MAX_AUDIT_GROUPS + 100; i++) audit.onRefused?.(rateLimited(`dns:caller-${i}`), undefined);
    // Every group writes its first line: the bound's worth of distinct callers, then one for all the rest.
    expect(logger.lines.length).toBe(MAX_AUDIT_GROUPS + 1);
    expect(logger.lines.at(-1)?.fields).toMatchObject({ caller: 'dns:caller-9999', rule: 'rate' });
    nowMs += AUDIT_SUMMARY_WINDOW_MS;
    vi.advanceTimersByTime(AUDIT_SUMMARY_WINDOW_MS);
    const counts = logger.lines
      .slice(MAX_AUDIT_GROUPS + 1)
      .map((line) => [
        line.message,
        (line.fields as { caller: string; suppressed: number }).caller,
        (line.fields as { suppressed: number }).suppressed,
      ]);
    expect(counts).toEqual([
      ['policy: audit lines suppressed', 'dns:flood', 499],
      ['policy: audit lines suppressed', '*', 100],
    ]);
    // A new second: the flood's next refusal is written whole again.
    audit.onRefused?.(rateLimited('dns:flood'), undefined);
    expect(logger.lines.at(-1)).toMatchObject({ message: 'policy: token refused', fields: { caller: 'dns:flood', rule: 'rate' } });
  });
});
