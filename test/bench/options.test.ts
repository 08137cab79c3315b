import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RESULTS_DIR } from '../../bench/kit/paths.js';
import { SERVER_NAMES } from '../../bench/macro/servers.js';
import { helpText } from '../../bench/options/help.js';
import { parseCommandLine } from '../../bench/options/parse.js';
import type { BenchOptions } from '../../bench/options/types.js';
import { UsageError } from '../../bench/kit/program.js';

function options(...argv: string[]): BenchOptions {
  const parsed = parseCommandLine(argv, SERVER_NAMES);
  if (parsed.kind !== 'run') throw new Error('expected a run');
  return parsed.options;
}

describe('parseCommandLine', () => {
  it('defaults to the quick profile, micro and ghz, everything selected', () => {
    expect(options()).toEqual({
      profile: 'quick',
      micro: true,
      macro: true,
      load: { h2load: true, openLoop: false, fixedLoad: false, warmupSweep: false, rest: false, startup: true },
      servers: null,
      algorithms: null,
      cells: null,
      features: null,
      jwksThroughput: false,
      revokeThroughput: false,
      keyBackends: [],
      baselineRef: null,
      scope: 'ratios',
      durationS: 1.5,
      warmupS: 1,
      rounds: 5,
      serverCores: null,
      html: false,
      label: null,
      out: DEFAULT_RESULTS_DIR,
      printSummary: true,
    });
  });

  it('--full takes 10 rounds of 5 s over the whole matrix, with HTML', () => {
    expect(options('--full')).toMatchObject({ profile: 'full', durationS: 5, rounds: 10, scope: 'all', html: true });
  });

  it('--smoke is short', () => {
    const o = options('--smoke');
    expect(o.profile).toBe('smoke');
    expect(o.durationS).toBeLessThan(1);
    expect(o.warmupS).toBe(0);
    expect(o.scope).toBe('one-per-kind');
    expect(o.rounds).toBeGreaterThanOrEqual(5);
  });

  it("overrides a profile's numbers", () => {
    expect(options('--full', '--duration', '3', '--rounds', '12', '--warmup', '0', '--no-html')).toMatchObject({
      durationS: 3,
      rounds: 12,
      warmupS: 0,
      html: false,
    });
  });

  it('parses the selections', () => {
    const o = options(
      '--ghz-only',
      '--servers',
      'go,jwt-grpc',
      '--algorithms',
      'ES256,HS256',
      '--cells',
      'Single,verify',
      '--server-cores',
      '2',
      '--out',
      'x/y',
    );
    expect(o.micro).toBe(false);
    expect(o.servers).toEqual(['go', 'jwt-grpc']);
    expect(o.algorithms).toEqual(['ES256', 'HS256']);
    expect(o.cells).toEqual(['single', 'verify']);
    expect(o.serverCores).toEqual([2]);
    expect(o.out).toBe(resolve('x/y'));
    expect(options('--server-cores', '2,4,8,4').serverCores).toEqual([2, 4, 8]);
    expect(options('--label', ' 16-core bare metal ').label).toBe('16-core bare metal');
    expect(options('--micro-only').macro).toBe(false);
  });

  it('selects the load sections: quick h2load and start-up, full all five, smoke none; flags add, --load-only and --no-load restrict', () => {
    const none = { h2load: false, openLoop: false, fixedLoad: false, warmupSweep: false, rest: false, startup: false };
    expect(options('--full').load).toEqual({
      h2load: true,
      openLoop: true,
      fixedLoad: false,
      warmupSweep: true,
      rest: true,
      startup: true,
    });
    expect(options('--smoke').load).toEqual(none);
    expect(options('--smoke', '--open-loop').load).toEqual({ ...none, openLoop: true });
    expect(options('--micro-only').load).toEqual(none);
    expect(options('--ghz-only', '--warmup-sweep').load).toEqual({ ...none, warmupSweep: true });
    expect(options('--no-load').load).toEqual(none);
    expect(options('--ghz-only', '--startup').load).toEqual({ ...none, startup: true });
    expect(options('--load-only', '--startup').load).toEqual({ ...none, startup: true });
    const loadOnly = options('--full', '--load-only', '--open-loop');
    expect(loadOnly).toMatchObject({ micro: false, macro: false, load: { ...none, openLoop: true } });
    expect(options('--full', '--load-only').load).toEqual({
      h2load: true,
      openLoop: true,
      fixedLoad: false,
      warmupSweep: true,
      rest: true,
      startup: true,
    });
    // The REST rows: full only by default, --rest adds them anywhere, --no-load refuses them.
    expect(options('--quick').load.rest).toBe(false);
    expect(options('--smoke', '--rest').load).toEqual({ ...none, rest: true });
    expect(options('--load-only', '--rest').load).toEqual({ ...none, rest: true });
    expect(() => options('--no-load', '--rest')).toThrow(/--rest/);
    // CPU per call at fixed load: in no profile on its own (full's open loop has its points), --fixed-load adds it.
    expect(options('--quick').load.fixedLoad).toBe(false);
    expect(options('--load-only', '--fixed-load').load).toEqual({ ...none, fixedLoad: true });
    expect(options('--fixed-load').load).toMatchObject({ h2load: true, fixedLoad: true, startup: true });
    expect(() => options('--no-load', '--fixed-load')).toThrow(/--fixed-load/);
  });

  it('answers --help and -h', () => {
    expect(parseCommandLine(['--help'], SERVER_NAMES)).toEqual({ kind: 'help' });
    expect(parseCommandLine(['-h'], SERVER_NAMES)).toEqual({ kind: 'help' });
  });

  it.each([
    [['--bogus'], /Unknown option '--bogus'/],
    [['extra'], /positional/i],
    [['--full', '--smoke'], /one profile/],
    [['--micro-only', '--ghz-only'], /exclude/],
    [['--load-only', '--ghz-only'], /exclude/],
    [['--no-load', '--h2load'], /--no-load excludes/],
    [['--no-load', '--load-only'], /--no-load excludes/],
    [['--servers', 'nginx'], /--servers: "nginx" is not one of/],
    [['--algorithms', 'HS512'], /"HS512" is not one of/],
    [['--algorithms', 'es256'], /"es256" is not one of/],
    [['--duration', 'abc'], /--duration/],
    [['--duration', '0'], /--duration/],
    [['--rounds', '1.5'], /whole number/],
    [['--repetitions', '3'], /Unknown option '--repetitions'/],
    [['--server-cores', '0'], /--server-cores/],
    [['--server-cores', '2,x'], /--server-cores/],
    [['--label', 'a|b'], /--label/],
    [['--servers', ''], /comma-separated/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseCommandLine(argv, SERVER_NAMES)).toThrow(UsageError);
    expect(() => parseCommandLine(argv, SERVER_NAMES)).toThrow(message);
  });
});

describe('helpText', () => {
  it('lists every option the parser accepts, and every server', () => {
    const text = helpText(SERVER_NAMES);
    for (const flag of [
      '--quick',
      '--full',
      '--smoke',
      '--micro-only',
      '--ghz-only',
      '--load-only',
      '--h2load',
      '--open-loop',
      '--fixed-load',
      '--warmup-sweep',
      '--no-load',
      '--servers',
      '--algorithms',
      '--cells',
      '--duration',
      '--warmup',
      '--rounds',
      '--server-cores',
      '--html',
      '--no-html',
      '--label',
      '--out',
      '--help',
    ]) {
      expect(text).toContain(flag);
    }
    for (const name of SERVER_NAMES) expect(text).toContain(name);
  });
});
