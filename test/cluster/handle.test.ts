/**
 * The pieces every cluster role shares: stop signals (the first drains, the second forces),
 * SIGHUP reloading what has a loader, the errors of a reload with nothing to load, and the
 * exit latch. A signal is delivered by calling the listeners the module added, not the
 * test runner's own.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';
import { exitLatch, noKeyLoader, noPolicyLoader, onReloadSignal, onStopSignals } from '../../src/cluster/handle.js';
import { JwtGrpcError } from '../../src/base/errors.js';

/** What the logger said, one `level message` line each. */
const said = (log: ReturnType<typeof recordingLogger>): string[] => log.lines.map(({ level, message }) => `${level} ${message}`);

const removers: (() => void)[] = [];
afterEach(() => {
  for (const remove of removers.splice(0)) remove();
});

type Signal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';
const SIGNALS: readonly Signal[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
/** The listeners of each signal before the module under test added its own. */
let before = new Map<Signal, NodeJS.SignalsListener[]>();
beforeEach(() => {
  before = new Map(SIGNALS.map((signal) => [signal, process.listeners(signal)]));
});

/** Calls the listeners of `signal` added since the test began. */
function emit(signal: Signal): void {
  const earlier = before.get(signal) ?? [];
  for (const listener of process.listeners(signal)) if (!earlier.includes(listener)) (listener as (s: Signal) => void)(signal);
}

const added = (signal: Signal): number => process.listenerCount(signal) - (before.get(signal)?.length ?? 0);

describe('onStopSignals', () => {
  it('drains on the first SIGTERM or SIGINT and forces on the next, until removed', () => {
    const seen: string[] = [];
    const remove = onStopSignals(
      () => seen.push('drain'),
      () => seen.push('force'),
    );
    expect([added('SIGTERM'), added('SIGINT')]).toEqual([1, 1]);
    emit('SIGTERM');
    emit('SIGINT');
    emit('SIGTERM');
    expect(seen).toEqual(['drain', 'force', 'force']);
    remove();
    expect([added('SIGTERM'), added('SIGINT')]).toEqual([0, 0]);
    emit('SIGTERM');
    expect(seen).toHaveLength(3);
  });
});

describe('onReloadSignal', () => {
  it('reloads the keys and the policy on SIGHUP, saying what', () => {
    const log = recordingLogger();
    const reloaded: string[] = [];
    removers.push(
      onReloadSignal(
        {
          keys: async () => reloaded.push('keys'),
          policy: async () => reloaded.push('policy'),
        },
        log,
      ),
    );
    emit('SIGHUP');
    expect(reloaded).toEqual(['keys', 'policy']);
    expect(said(log)).toEqual(['info SIGHUP: reloading the keys and the policy']);
  });

  it('reloads only what has a loader, and swallows a failed reload (which logs itself)', async () => {
    const log = recordingLogger();
    removers.push(onReloadSignal({ keys: undefined, policy: () => Promise.reject(new Error('bad policy')) }, log));
    emit('SIGHUP');
    await new Promise((resolve) => setImmediate(resolve));
    expect(said(log)).toEqual(['info SIGHUP: reloading the policy']);
  });

  it('warns that there is nothing to reload without loaders', () => {
    const log = recordingLogger();
    removers.push(onReloadSignal({ keys: undefined, policy: undefined }, log));
    emit('SIGHUP');
    expect(said(log)).toEqual(['warn SIGHUP: nothing to reload (the server runs on ephemeral keys, without a policy file)']);
  });

  it('stops listening once removed', () => {
    const log = recordingLogger();
    const remove = onReloadSignal({ keys: undefined, policy: undefined }, log);
    expect(added('SIGHUP')).toBe(1);
    remove();
    expect(added('SIGHUP')).toBe(0);
  });
});

describe('noKeyLoader and noPolicyLoader', () => {
  it('are ERR_SERVER_STATE errors saying why there is nothing to reload', () => {
    expect(noKeyLoader()).toBeInstanceOf(JwtGrpcError);
    expect([noKeyLoader().code, noKeyLoader().message]).toEqual([
      'ERR_SERVER_STATE',
      'no key file to reload: the server runs on ephemeral keys (no keys option)',
    ]);
    expect([noPolicyLoader().code, noPolicyLoader().message]).toEqual([
      'ERR_SERVER_STATE',
      'no policy file to reload: the server was started without the policy option',
    ]);
  });
});

describe('exitLatch', () => {
  it('resolves done with the first code finished with', async () => {
    const { done, finish } = exitLatch();
    finish(1);
    finish(0);
    expect(await done).toBe(1);
  });
});
