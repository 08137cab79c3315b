import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RESULTS_DIR } from '../../bench/common/paths.js';
import { SERVER_NAMES } from '../../bench/ghz/servers.js';
import { helpText } from '../../bench/options/help.js';
import { parseCommandLine } from '../../bench/options/parse.js';
import type { BenchOptions } from '../../bench/options/types.js';
import { UsageError } from '../../bench/options/usage-error.js';

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
      servers: null,
      algorithms: null,
      cells: null,
      durationS: 3,
      warmupS: 1,
      repetitions: 1,
      serverCores: null,
      html: false,
      out: DEFAULT_RESULTS_DIR,
      printSummary: true,
    });
  });

  it('--full takes the reference durations and three repetitions, with HTML', () => {
    expect(options('--full')).toMatchObject({ profile: 'full', durationS: 10, repetitions: 3, html: true });
  });

  it('--smoke is short', () => {
    const o = options('--smoke');
    expect(o.profile).toBe('smoke');
    expect(o.durationS).toBeLessThan(1);
    expect(o.warmupS).toBe(0);
  });

  it('overrides a profile\'s numbers', () => {
    expect(options('--full', '--duration', '5', '--repetitions', '2', '--warmup', '0', '--no-html')).toMatchObject({
      durationS: 5,
      repetitions: 2,
      warmupS: 0,
      html: false,
    });
  });

  it('parses the selections', () => {
    const o = options('--ghz-only', '--servers', 'go,jwt-grpc', '--algorithms', 'ES256,HS256', '--cells', 'Single,verify', '--server-cores', '2', '--out', 'x/y');
    expect(o.micro).toBe(false);
    expect(o.servers).toEqual(['go', 'jwt-grpc']);
    expect(o.algorithms).toEqual(['ES256', 'HS256']);
    expect(o.cells).toEqual(['single', 'verify']);
    expect(o.serverCores).toBe(2);
    expect(o.out).toBe(resolve('x/y'));
    expect(options('--micro-only').macro).toBe(false);
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
    [['--servers', 'nginx'], /unknown server "nginx"/],
    [['--algorithms', 'HS512'], /"HS512" is not one of/],
    [['--algorithms', 'es256'], /"es256" is not one of/],
    [['--duration', 'abc'], /--duration/],
    [['--duration', '0'], /--duration/],
    [['--repetitions', '1.5'], /whole number/],
    [['--server-cores', '0'], /--server-cores/],
    [['--servers', ''], /comma-separated/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseCommandLine(argv, SERVER_NAMES)).toThrow(UsageError);
    expect(() => parseCommandLine(argv, SERVER_NAMES)).toThrow(message);
  });
});

describe('helpText', () => {
  it('lists every option the parser accepts, and every server', () => {
    const text = helpText(SERVER_NAMES);
    for (const flag of ['--quick', '--full', '--smoke', '--micro-only', '--ghz-only', '--servers', '--algorithms', '--cells', '--duration', '--warmup', '--repetitions', '--server-cores', '--html', '--no-html', '--out', '--help']) {
      expect(text).toContain(flag);
    }
    for (const name of SERVER_NAMES) expect(text).toContain(name);
  });
});
