/**
 * The computing parts of the load sections (bench/load/): the request bytes h2load and
 * the open-loop generator send, h2load's report, the servers' own status counts, the
 * paired ratios and the summary's tables. With real servers: load-generators.integration.test.ts.
 */
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { PROTO_PATH } from '../../src/base/package-root.js';
import { encodeGenerateJwtRequest, encodeVarint, grpcFrame } from '../../bench/kit/grpc-body.js';
import { h2loadArgs, parseH2loadOutput } from '../../bench/load/h2load.js';
import { figures, pairedRatio, saturatedSide } from '../../bench/load/h2load-section.js';
import { parseHandledTotal, statusErrors } from '../../bench/load/ok-count.js';
import { ratePoints } from '../../bench/load/open-loop.js';
import type { LoadResults } from '../../bench/load/results.js';
import { loadSummary } from '../../bench/load/summary.js';
import { pairRatios } from '../../bench/load/warmup.js';

describe('the request bytes', () => {
  it('encode GenerateJwtRequest as protobuf decodes it', async () => {
    const root = await protobuf.load(PROTO_PATH);
    const type = root.lookupType('jwt.services.GenerateJwtRequest');
    for (const algorithm of ['HS256', 'ES256', 'x'.repeat(300)]) {
      expect(type.toObject(type.decode(encodeGenerateJwtRequest(algorithm)))).toEqual({ algorithm });
    }
    expect(encodeGenerateJwtRequest('HS256').toString('hex')).toBe('0a054853323536');
  });

  it('frame a message with the 5-byte gRPC prefix: not compressed, big-endian length', () => {
    const framed = grpcFrame(Buffer.from('0a054853323536', 'hex'));
    expect(framed.toString('hex')).toBe('00000000070a054853323536');
    expect(grpcFrame(Buffer.alloc(70_000)).subarray(0, 5).toString('hex')).toBe('0000011170');
  });

  it('write varints in 7-bit groups, low first', () => {
    expect(encodeVarint(0).toString('hex')).toBe('00');
    expect(encodeVarint(127).toString('hex')).toBe('7f');
    expect(encodeVarint(300).toString('hex')).toBe('ac02');
    expect(() => encodeVarint(-1)).toThrow(RangeError);
  });
});

describe('h2load', () => {
  it('is given the gRPC headers, the body file and the method path', () => {
    const args = h2loadArgs({ port: 5, path: '/a.B/C', bodyFile: '/tmp/b', threads: 1, connections: 5, streams: 50, durationS: 2 });
    expect(args.join(' ')).toBe(
      '-t 1 -c 5 -m 50 -D 2000ms -d /tmp/b -H content-type: application/grpc -H te: trailers http://127.0.0.1:5/a.B/C',
    );
  });

  it('report is parsed; a report without its lines is refused', () => {
    const text = [
      'starting benchmark...',
      'finished in 1.50s, 20066.67 req/s, 6.55MB/s',
      'requests: 30100 total, 30350 started, 30100 done, 30097 succeeded, 3 failed, 0 errored, 1 timeout',
      'status codes: 30097 2xx, 0 3xx, 3 4xx, 0 5xx',
    ].join('\n');
    expect(parseH2loadOutput(text)).toEqual({ finishedS: 1.5, succeeded: 30097, failed: 3, errored: 0, timeout: 1, status2xx: 30097 });
    expect(parseH2loadOutput(text.replace('1.50s', '800.5ms')).finishedS).toBeCloseTo(0.8005);
    expect(() => parseH2loadOutput('connect: Connection refused')).toThrow(/no report/);
  });
});

describe("the servers' own status counts", () => {
  it('sum grpc_server_handled_total of one method by outcome', () => {
    const text = [
      '# TYPE grpc_server_handled_total counter',
      'grpc_server_handled_total{grpc_type="unary",grpc_service="jwt.services.JwtService",grpc_method="GenerateJwt",grpc_code="OK"} 75550',
      'grpc_server_handled_total{grpc_type="unary",grpc_service="jwt.services.JwtService",grpc_method="GenerateJwt",grpc_code="INVALID_ARGUMENT"} 3',
      'grpc_server_handled_total{grpc_type="unary",grpc_service="jwt.services.JwtService",grpc_method="GenerateJwt",grpc_code="UNAVAILABLE"} 2',
      'grpc_server_handled_total{grpc_type="unary",grpc_service="jwt.services.JwtService",grpc_method="VerifyJwt",grpc_code="OK"} 9',
    ].join('\n');
    expect(parseHandledTotal(text, 'GenerateJwt')).toEqual({ ok: 75550, failed: 5 });
  });

  it('count failed calls, and HTTP 2xx answers beyond the OK count, but not OK calls the generator stopped waiting for', () => {
    const before = { ok: 100, failed: 1 };
    expect(statusErrors(before, { ok: 350, failed: 1 }, 100)).toBe(0); // 150 finished after h2load stopped
    expect(statusErrors(before, { ok: 200, failed: 4 }, 100)).toBe(3);
    expect(statusErrors(before, { ok: 150, failed: 1 }, 100)).toBe(50); // 50 answers the method never counted
  });
});

describe('ratios and saturation', () => {
  it('pair rounds by number and give an interval from 5', () => {
    const a = [1, 2, 3, 4, 5].map((round) => ({ round, value: 2 * round }));
    const b = [1, 2, 3, 4, 5].map((round) => ({ round, value: round }));
    expect(pairedRatio(a, b, 'k')).toMatchObject({ median: 2, low: 2, high: 2, n: 5 });
    expect(pairedRatio(a.slice(0, 3), b, 'k')).toMatchObject({ median: 2, low: null, high: null, n: 3 });
    expect(pairedRatio(a, [], 'k')).toBeNull();
  });

  it('pair warm-up rounds by start and round; ours / Go in calls per CPU-second', () => {
    const ours = [
      { start: 1, round: 1, cpuPerCallUs: 20, requestsPerS: 1 },
      { start: 2, round: 1, cpuPerCallUs: 10, requestsPerS: 1 },
    ];
    const go = [
      { start: 1, round: 1, cpuPerCallUs: 10, requestsPerS: 1 },
      { start: 2, round: 1, cpuPerCallUs: 10, requestsPerS: 1 },
    ];
    expect(pairRatios(ours, go)).toEqual([0.5, 1]);
  });

  it('name the saturated side: the server first, then the generator', () => {
    expect(saturatedSide(0.95, 0.99)).toBe('server');
    expect(saturatedSide(0.5, 0.93)).toBe('generator');
    expect(saturatedSide(0.5, null)).toBe('neither');
    const round = { requestsPerS: 100, errors: 1, serverCpu: 0.97, generatorCpu: 0.4, cpuPerCallUs: 10, foreignCpuShare: 0, stealShare: 0 };
    expect(figures([round, { ...round, requestsPerS: 120, foreignCpuShare: 0.2 }], 'k')).toMatchObject({
      saturated: 'server',
      errors: 2,
      requestsPerS: { median: 110 },
      disturbedRounds: 1,
    });
    expect(figures([], 'k')).toBeNull();
  });

  it("offer each server shares of its own capacity and of Go's, and the fixed rates", () => {
    const points = ratePoints(['jwt-grpc', 'go'], (s) => (s === 'go' ? 1000 : 800), [50]);
    expect(points.filter((p) => p.server === 'jwt-grpc').map((p) => p.offeredRps)).toEqual([200, 400, 600, 720, 250, 500, 800, 50]);
    expect(points.filter((p) => p.fractionOfGoCapacity === 0.8).map((p) => p.offeredRps)).toEqual([800, 800]);
  });
});

describe("the summary's load sections", () => {
  const interval = (median: number, low: number | null = median * 0.9, high: number | null = median * 1.1) => ({
    median,
    low,
    high,
    n: low === null ? 3 : 5,
  });
  const results: LoadResults = {
    h2load: null,
    openLoop: [
      {
        server: 'jwt-grpc',
        algorithm: 'HS256',
        offeredRps: 5000,
        fractionOfGoCapacity: 0.5,
        p50Ms: interval(1),
        p99Ms: interval(4),
        p999Ms: interval(9, null, null),
        achievedRps: 4990,
        errors: 0,
        rounds: 5,
        generatorCpu: 0.95,
        maxSendLagMs: 0.4,
      },
    ],
    openLoopRatios: [{ algorithm: 'HS256', fractionOfGoCapacity: 0.5, offeredRps: 5000, p99Ratio: interval(0.8, 0.7, 0.9) }],
    warmup: [
      {
        server: 'jwt-grpc',
        algorithm: 'HS256',
        warmupCalls: 2000,
        ratioToGo: interval(0.7, 0.63, 0.77),
        cpuPerCallUs: 14,
        requestsPerS: 9000,
        starts: 2,
        roundsPerStart: 3,
      },
      { server: 'go', algorithm: 'HS256', warmupCalls: 2000, cpuPerCallUs: 10, requestsPerS: 9000, starts: 2, roundsPerStart: 3 },
    ],
    startup: [{ server: 'go', timeToFirstOkMs: interval(18, 11, 57) }],
    startupRows: [
      {
        id: 'bare-node-listener',
        what: 'bare Node TCP listener: exec to the port accepting',
        ms: interval(40, 36, 44),
        ratio: null,
        ratioTo: null,
      },
      {
        id: 'keys-file',
        what: 'jwt-grpc serve --keys FILE: exec to the first OK GenerateJwt',
        ms: interval(200, 190, 210),
        ratio: interval(5, 4.5, 5.5),
        ratioTo: 'bare-node-listener',
      },
    ],
    startupSettings: { runs: 11, cpus: [0], replacementLoadCalls: 8 },
    loadSettings: {
      servers: ['jwt-grpc', 'go'],
      algorithms: ['HS256'],
      openLoop: null,
      warmup: null,
      notes: ['h2load cells skipped: h2load not found'],
    },
  };
  const text = loadSummary(results).join('\n\n');

  it('give the headline p99 ratio, each percentile with its interval, and mark a busy generator', () => {
    expect(text).toContain('| HS256 | 50 % (5,000/s) | 0.80x (0.70-0.90) |');
    expect(text).toContain(
      "| HS256 | jwt-grpc | 50 % of Go's | 5,000 | 4,990 | 1.00 (0.90-1.10) | 4.00 (3.60-4.40) | 9.00 (n=3) | 0 ⚑ | 0.40 |",
    );
  });

  it('give CPU per call of both servers and the ratio per warm-up count, start-up times, and the notes', () => {
    expect(text).toContain('| HS256 | 2,000 | 14.0 | 10.0 | 0.70x (0.63-0.77) |');
    expect(text).toContain('| go | 18.0 (11.0-57.0) |');
    expect(text).toContain('- h2load cells skipped: h2load not found');
  });

  it('give the start-up section: each row in ms with its interval, and its ratio to the reference row of the same runs', () => {
    expect(text).toContain('### Start-up');
    expect(text).toContain('| bare Node TCP listener: exec to the port accepting | 40.0 (36.0-44.0) |  |');
    expect(text).toContain(
      '| jwt-grpc serve --keys FILE: exec to the first OK GenerateJwt | 200 (190-210) | 5.00x (4.50-5.50) of bare-node-listener |',
    );
  });

  it('are absent when no load section ran', () => {
    expect(loadSummary({ ...results, loadSettings: null })).toEqual([]);
  });
});
