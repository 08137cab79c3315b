/**
 * `npm run profile -- --instructions`: reading callgrind's dumps and annotations, naming JIT
 * code from Node's perf map, and the summary. The count itself needs valgrind and minutes of
 * a server under it: it is run by hand (bench/PERFORMANCE.md, "ES256 budget").
 */
import { describe, expect, it } from 'vitest';
import { callgrindTotal, formatInstructionCount, jitName, parsePerfMap, selfByFunction } from '../../bench/profile/instructions.js';

describe('callgrindTotal', () => {
  it('reads the summary line, or the totals line of a dump that has none', () => {
    expect(callgrindTotal('version: 1\nevents: Ir\nsummary: 1794704063\n\nfn=(1) main\n')).toBe(1_794_704_063);
    expect(callgrindTotal('events: Ir\nfn=(1) x\n0 12\ntotals: 4200\n')).toBe(4200);
  });

  it('refuses a dump with neither, rather than count zero', () => {
    expect(() => callgrindTotal('events: Ir\n')).toThrow('without a summary or totals line');
  });
});

describe('the perf map', () => {
  const map = parsePerfMap(
    '28102480 200 JS:*validate file:///w/dist/src/a.js:1:1\n2811dac0 80 JS:*sign file:///w/dist/src/b.js:2:2\n28102480 40 JS:+later\n',
  );

  it('gives each range its start, end and name', () => {
    expect(map[1]).toEqual({ start: 0x2811dac0, end: 0x2811db40, name: 'JS:*sign file:///w/dist/src/b.js:2:2' });
  });

  it('names an address by the latest range that holds it (V8 reuses code space), and none outside every range', () => {
    expect(jitName(map, 0x28102490)).toBe('JS:+later');
    expect(jitName(map, 0x28102600)).toBe('JS:*validate file:///w/dist/src/a.js:1:1');
    expect(jitName(map, 0x2811db40)).toBeUndefined();
  });
});

describe('selfByFunction', () => {
  const annotated = [
    '--------------------------------------------------------------------------------',
    '1,000,000 (100.0%)  PROGRAM TOTALS',
    '1,000,000 (100.0%)  ???:node::SpinEventLoopInternal(node::Environment*) [/x/node]',
    '  500,000 (50.00%)  ???:sha256_block_data_order_avx2 [/x/node]',
    '  300,000 (30.00%)  ???:0x0000000028102490 [???]',
    '  100,000 (10.00%)  ???:0x0000000028102500 [???]',
    '   60,000 ( 6.00%)  ./malloc/./malloc/malloc.c:_int_free [/usr/lib/libc.so.6]',
    '   40,000 ( 4.00%)  ???:0x0000000099999999 [???]',
  ].join('\n');
  const ranges = parsePerfMap('28102480 200 JS:*validate file:///w/jwt-grpc/dist/src/transport/a.js:1:1\n');

  it('adds up JIT addresses by the function that holds them, named without the dist path, and drops the event loop frames', () => {
    expect(Object.fromEntries(selfByFunction(annotated, ranges))).toEqual({
      sha256_block_data_order_avx2: 500_000,
      'JS:*validate src/transport/a.js:1:1': 400_000,
      _int_free: 60_000,
      'JIT code at 0x0000000099999999': 40_000,
    });
  });

  it('prints the counts per call and the largest functions first', () => {
    const text = formatInstructionCount(
      {
        calls: 10,
        mainPerCall: 96_027.4,
        otherThreadsPerCall: 9_871,
        functions: [
          { name: 'a', perCall: 500.4 },
          { name: 'b', perCall: 12 },
        ],
      },
      1,
    );
    expect(text).toBe(
      '10 OK calls counted: 96027 instructions per call on the main thread, 9871 on the others\n\n' +
        'self instructions per call by function (main thread, largest first):\n      500  a',
    );
  });
});
