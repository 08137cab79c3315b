import { describe, expect, it } from 'vitest';
import { type CpuProfile, categoryOf, formatProfileSummary, summarizeProfile } from '../../bench/profile/summarize.js';

const frame = (id: number, functionName: string, url: string) => ({ id, callFrame: { functionName, url, lineNumber: 9 } });

describe('categoryOf', () => {
  it.each([
    ['(idle)', '', 'idle'],
    ['(garbage collector)', '', 'GC'],
    ['(program)', '', 'V8 and native (program)'],
    ['writeBuffer', '', 'native builtins'],
    ['handleUnary', 'file:///w/node_modules/@grpc/grpc-js/build/src/server.js', '@grpc/grpc-js'],
    ['startSpan', 'file:///w/node_modules/@opentelemetry/sdk-trace-base/build/src/Tracer.js', 'OpenTelemetry (API, SDK, exporter)'],
    ['decode', 'file:///w/node_modules/protobufjs/src/reader.js', 'protobufjs (proto-loader)'],
    ['signOneShot', 'node:internal/crypto/sig', 'node:crypto'],
    ['respond', 'node:internal/http2/core', 'node:http2'],
    ['emit', 'node:events', 'node (other)'],
    ['sign', 'file:///w/jwt-grpc/dist/src/tokens/sign.js', 'this repository'],
    ['x', 'file:///w/node_modules/fast-jwt/src/signer.js', 'other'],
  ])('%s in %s is %s', (name, url, category) => {
    expect(categoryOf(name, url)).toBe(category);
  });
});

describe('summarizeProfile', () => {
  // 4 samples: 300 us idle, 500 us in sign (twice), 200 us GC.
  const profile: CpuProfile = {
    nodes: [frame(1, '(idle)', ''), frame(2, 'sign', 'file:///w/jwt-grpc/dist/src/tokens/sign.js'), frame(3, '(garbage collector)', '')],
    samples: [1, 2, 3, 2],
    timeDeltas: [300, 250, 200, 250],
  };

  it('sums self time by category and function, with the busy share', () => {
    const summary = summarizeProfile(profile);
    expect(summary.totalUs).toBe(1000);
    expect(summary.busyShare).toBeCloseTo(0.7);
    expect(summary.categories).toEqual([
      { name: 'this repository', us: 500, share: 0.5 },
      { name: 'idle', us: 300, share: 0.3 },
      { name: 'GC', us: 200, share: 0.2 },
    ]);
    expect(summary.functions[0]).toEqual({ name: 'sign dist/src/tokens/sign.js:10', us: 500, share: 0.5 });
  });

  it('formats per-call figures when the number of calls is known', () => {
    const text = formatProfileSummary(summarizeProfile(profile), 10);
    expect(text).toContain('main thread busy 70 %, 10 calls');
    expect(text).toMatch(/50\.0 %\s+50\.0 us\/call\s+this repository/);
  });
});
