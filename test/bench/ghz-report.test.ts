import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ghzArgs } from '../../bench/ghz/ghz-args.js';
import { type GhzJsonReport, redactToken, summarizeGhzReport, withoutDetails } from '../../bench/ghz/ghz-report.js';

/** Reports written by real ghz v0.120.0 runs against `jwt-grpc serve` (see each test). */
function fixture(name: string): GhzJsonReport {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as GhzJsonReport;
}

describe('summarizeGhzReport', () => {
  it('reads an all-OK run (24 GenerateJwt HS256 calls, -c 4)', () => {
    const report = fixture('ghz-ok.json');
    const s = summarizeGhzReport(report);
    expect(s.count).toBe(24);
    expect(s.okCount).toBe(24);
    expect(s.nonOkByStatus).toEqual({});
    expect(s.totalSeconds).toBeCloseTo(report.total / 1e9, 12);
    expect(s.rpsOk).toBeCloseTo(24 / (report.total / 1e9), 6);
    // Percentiles come from ghz's latencyDistribution (ns) in ms.
    expect(s.latencyMs.p50).toBeCloseTo(4.258531, 6);
    expect(s.latencyMs.p90).toBeCloseTo(43.240271, 6);
    expect(s.latencyMs.p99).toBeCloseTo(43.254643, 6);
    // All OK: the mean over OK details equals ghz's average.
    expect(s.latencyMs.mean).toBeCloseTo(report.average / 1e6, 3);
    expect(s.endReason).toBe('normal');
  });

  it('counts only OK responses in rps_ok (a --duration-stop=close run: 59 OK, 1 Unavailable)', () => {
    const report = fixture('ghz-close-unavailable.json');
    const s = summarizeGhzReport(report);
    expect(s.count).toBe(60);
    expect(s.okCount).toBe(59);
    expect(s.nonOkByStatus).toEqual({ Unavailable: 1 });
    expect(Object.values(s.errors)).toEqual([1]);
    expect(Object.keys(s.errors)[0]).toMatch(/Unavailable/);
    expect(s.rpsOk).toBeCloseTo(59 / (report.total / 1e9), 6);
    expect(s.rpsOk).toBeLessThan(s.rpsAllResponses);
    expect(s.endReason).toBe('timeout');
  });

  it("computes the mean over OK calls only, unlike ghz's average", () => {
    const report = fixture('ghz-close-unavailable.json');
    const ok = (report.details ?? []).filter((d) => d.status === 'OK');
    const expected = ok.reduce((sum, d) => sum + d.latency, 0) / ok.length / 1e6;
    expect(summarizeGhzReport(report).latencyMs.mean).toBeCloseTo(expected, 9);
  });

  it('reports zero throughput and no percentiles when nothing was OK (InvalidArgument x 6)', () => {
    const s = summarizeGhzReport(fixture('ghz-errors.json'));
    expect(s.count).toBe(6);
    expect(s.okCount).toBe(0);
    expect(s.rpsOk).toBe(0);
    expect(s.nonOkByStatus).toEqual({ InvalidArgument: 6 });
    expect(Number.isNaN(s.latencyMs.p99)).toBe(true);
    expect(Number.isNaN(s.latencyMs.mean)).toBe(true);
  });

  it("falls back to ghz's average without details", () => {
    const report = withoutDetails(fixture('ghz-ok.json'));
    expect(summarizeGhzReport(report).latencyMs.mean).toBeCloseTo(report.average / 1e6, 9);
  });

  it('refuses something that is not a ghz report', () => {
    expect(() => summarizeGhzReport({} as GhzJsonReport)).toThrow(/not a ghz JSON report/);
  });
});

describe('withoutDetails', () => {
  it('drops the per-call list and keeps the rest', () => {
    const trimmed = withoutDetails(fixture('ghz-ok.json'));
    expect('details' in trimmed).toBe(false);
    expect(trimmed.count).toBe(24);
    expect(trimmed.latencyDistribution).toHaveLength(7);
  });
});

describe('ghzArgs', () => {
  const args = ghzArgs({
    method: 'GenerateJwt',
    data: { algorithm: 'ES256' },
    connections: 5,
    concurrency: 250,
    durationS: 3,
    cpus: 1,
    port: 50051,
    output: '/tmp/x.json',
    name: 'go single-es256-5x250',
  });
  const valueOf = (flag: string): string | undefined => args[args.indexOf(flag) + 1];

  it('waits for calls in flight instead of reporting them as errors', () => {
    expect(args).toContain('--duration-stop=wait');
  });
  it('passes the load shape, duration, request and JSON output', () => {
    expect(valueOf('--connections')).toBe('5');
    expect(valueOf('-c')).toBe('250');
    expect(valueOf('-z')).toBe('3000ms');
    expect(valueOf('--cpus')).toBe('1');
    expect(valueOf('--call')).toBe('jwt.services.JwtService.GenerateJwt');
    expect(JSON.parse(valueOf('-d') ?? '')).toEqual({ algorithm: 'ES256' });
    expect(valueOf('-O')).toBe('json');
    expect(valueOf('-o')).toBe('/tmp/x.json');
    expect(args.at(-1)).toBe('127.0.0.1:50051');
  });
});

describe('redactToken', () => {
  it('replaces the request token of a VerifyJwt run and leaves everything else', () => {
    const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhQGIuYyJ9.c2lnbmF0dXJl';
    const base = fixture('ghz-ok.json') as GhzJsonReport & { options: Record<string, unknown> };
    const report = { ...base, options: { ...base.options, data: { jwt: token, audience: 'api' } } };
    const redacted = redactToken(report);
    expect(JSON.stringify(redacted)).not.toContain(token);
    expect(redacted.options['data']).toEqual({ jwt: `<token redacted: ${token.length} characters>`, audience: 'api' });
    expect(redacted.count).toBe(report.count);
    expect(report.options['data']).toEqual({ jwt: token, audience: 'api' });
  });

  it("replaces the bearer token of a protected run's authorization metadata", () => {
    const token = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhQGIuYyJ9.c2lnbmF0dXJl';
    const base = fixture('ghz-ok.json') as GhzJsonReport & { options: Record<string, unknown> };
    const report = {
      ...base,
      options: { ...base.options, data: { name: 'bench' }, metadata: { authorization: `Bearer ${token}`, 'x-other': 'kept' } },
    };
    const redacted = redactToken(report);
    expect(JSON.stringify(redacted)).not.toContain(token);
    expect(redacted.options['metadata']).toEqual({ authorization: `<token redacted: ${token.length + 7} characters>`, 'x-other': 'kept' });
    expect(redacted.options['data']).toEqual({ name: 'bench' });
  });

  it('returns a GenerateJwt report unchanged', () => {
    const report = fixture('ghz-ok.json');
    expect(redactToken(report)).toBe(report);
  });
});
