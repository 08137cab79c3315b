/**
 * What every call shares whichever transport carries it, through a small call that records
 * what it would send: a handler's failure mapped to a status (its own, UNKNOWN for a status
 * out of range, INTERNAL with nothing leaked for any other error), interceptors run in
 * order and awaited, a failing one ending the call, and onCallEnd told once.
 */
import { describe, expect, it } from 'vitest';
import { type CallSettings, CallCore, deserializeError } from '../../src/transport/call-core.js';
import {
  isThenable,
  type CallInterceptor,
  CallKey,
  CallMetadata,
  type CallOutcome,
  type CallerIdentity,
  GrpcStatus,
  GrpcStatusError,
  type StatusCode,
} from '../../src/contracts/handler-api.js';

interface Logged {
  readonly message: string;
  readonly fields: unknown;
}

class RecordingCall extends CallCore {
  readonly metadata = new CallMetadata();
  readonly deadline = Number.POSITIVE_INFINITY;
  readonly signal = new AbortController().signal;
  readonly peer = '127.0.0.1:1';
  readonly caller: CallerIdentity | undefined = undefined;
  ended: [StatusCode, string, CallMetadata | undefined] | undefined;
  responses: unknown[] = [];
  handled = false;

  sendMetadata(): void {}
  setResponseCompression(): void {}
  protected mayEnd(): boolean {
    return this.ended === undefined;
  }
  protected endWithStatus(status: StatusCode, details: string, metadata: CallMetadata | undefined): void {
    this.ended = [status, details, metadata];
    this.finished(status, details);
  }
  protected respond(response: unknown): void {
    this.responses.push(response);
    this.endWithStatus(GrpcStatus.OK, '', this.trailers);
  }

  /** As a transport starts a call: interceptors first, then the handler once they let it. */
  run(handler: () => unknown): void {
    if (!this.startInterceptors()) return;
    this.whenStarted(() => {
      this.handled = true;
      let result: unknown;
      try {
        result = handler();
      } catch (err) {
        this.fail(err);
        return;
      }
      this.settle(result);
    });
  }
}

function call(interceptors: readonly CallInterceptor[] = []): { call: RecordingCall; logged: Logged[] } {
  const logged: Logged[] = [];
  const log = (message: string, fields?: unknown): void => {
    logged.push({ message, fields });
  };
  const settings: CallSettings = { interceptors, logger: { info: log, warn: log, error: log } };
  return { call: new RecordingCall('/pkg.Svc/Method', settings), logged };
}

const turns = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('isThenable and deserializeError', () => {
  it('tells a thenable from a value', () => {
    expect(isThenable(Promise.resolve(1))).toBe(true);
    // biome-ignore lint/suspicious/noThenProperty: thenables are what isThenable tells apart
    expect(isThenable({ then: () => {} })).toBe(true);
    // biome-ignore lint/suspicious/noThenProperty: as above
    for (const value of [null, undefined, 1, 'then', { then: 1 }]) expect(isThenable(value)).toBe(false);
  });

  it("keeps a deserializer's GrpcStatusError, and makes anything else INTERNAL naming the method", () => {
    const own = new GrpcStatusError(GrpcStatus.INVALID_ARGUMENT, 'bad field');
    expect(deserializeError(own, '/p.S/M')).toBe(own);
    const other = deserializeError(new RangeError('index out of range'), '/p.S/M');
    expect([other.status, other.message]).toEqual([
      GrpcStatus.INTERNAL,
      'could not parse the request message of /p.S/M: index out of range',
    ]);
    expect(deserializeError('text', '/p.S/M').message).toBe('could not parse the request message of /p.S/M: text');
  });
});

describe('CallCore', () => {
  it('answers what a handler returns, or resolves to, with the trailers it set', async () => {
    const { call: sync } = call();
    sync.run(() => 'now');
    expect(sync.responses).toEqual(['now']);
    const { call: later } = call();
    later.run(() => {
      later.setTrailers(new CallMetadata().add('x-a', '1'));
      later.setTrailers(new CallMetadata().add('x-a', '2'));
      return Promise.resolve('later');
    });
    await turns();
    expect(later.responses).toEqual(['later']);
    expect(later.ended?.[2]?.getAll('x-a')).toEqual(['1', '2']);
  });

  it("ends with a GrpcStatusError's own status, details and metadata", async () => {
    const { call: c } = call();
    const metadata = new CallMetadata().set('x-why', 'expired');
    c.run(() => Promise.reject(new GrpcStatusError(GrpcStatus.UNAUTHENTICATED, 'token expired', { metadata })));
    await turns();
    expect(c.ended).toEqual([GrpcStatus.UNAUTHENTICATED, 'token expired', metadata]);
  });

  it('ends with UNKNOWN for a status a handler may not send (OK, or out of range)', () => {
    for (const status of [GrpcStatus.OK, 17, 1.5] as StatusCode[]) {
      const { call: c } = call();
      c.run(() => {
        throw new GrpcStatusError(status, 'odd');
      });
      expect(c.ended?.slice(0, 2), String(status)).toEqual([GrpcStatus.UNKNOWN, 'odd']);
    }
  });

  it('ends any other error with INTERNAL and the method only, logging the message', () => {
    const { call: c, logged } = call();
    c.run(() => {
      throw new Error('db password wrong: hunter2');
    });
    expect(c.ended?.slice(0, 2)).toEqual([GrpcStatus.INTERNAL, '/pkg.Svc/Method: internal error']);
    expect(logged).toEqual([{ message: '/pkg.Svc/Method failed', fields: { error: 'db password wrong: hunter2' } }]);
  });

  it('keeps a value an interceptor set for the handler, by key identity', () => {
    const CLAIMS = new CallKey<{ sub: string }>('claims');
    const { call: c } = call([{ onCallStart: (ctx) => ctx.set(CLAIMS, { sub: 'ada' }) }]);
    let seen: unknown;
    c.run(() => {
      seen = [c.get(CLAIMS), c.get(new CallKey('claims'))];
      return 'ok';
    });
    expect(seen).toEqual([{ sub: 'ada' }, undefined]);
  });

  it('runs interceptors in order, awaiting one that returns a promise before the next and the handler', async () => {
    const order: string[] = [];
    let release: () => void = () => {};
    const { call: c } = call([
      { onCallStart: () => void order.push('first') },
      { onCallStart: () => new Promise<void>((resolve) => (release = () => (order.push('second'), resolve()))) },
      { onCallStart: () => void order.push('third') },
    ]);
    c.run(() => (order.push('handler'), 'ok'));
    await turns();
    expect(order).toEqual(['first']);
    release();
    await turns();
    expect(order).toEqual(['first', 'second', 'third', 'handler']);
  });

  it('ends the call with the refusal of an interceptor, sync or async, and never runs the handler', async () => {
    const refusal = new GrpcStatusError(GrpcStatus.PERMISSION_DENIED, 'not allowed');
    const { call: sync } = call([
      {
        onCallStart: () => {
          throw refusal;
        },
      },
    ]);
    sync.run(() => 'ok');
    expect([sync.ended?.[0], sync.handled]).toEqual([GrpcStatus.PERMISSION_DENIED, false]);
    const { call: later } = call([{ onCallStart: () => Promise.resolve() }, { onCallStart: () => Promise.reject(refusal) }]);
    later.run(() => 'ok');
    await turns();
    expect([later.ended?.[1], later.handled]).toEqual(['not allowed', false]);
  });

  it('tells every onCallEnd the outcome once, and logs one that throws without stopping the others', () => {
    const outcomes: CallOutcome[] = [];
    const { call: c, logged } = call([
      {
        onCallEnd: () => {
          throw new Error('metrics down');
        },
      },
      { onCallEnd: (_ctx, outcome) => void outcomes.push(outcome) },
    ]);
    c.run(() => {
      throw new GrpcStatusError(GrpcStatus.NOT_FOUND, 'no such key');
    });
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ status: GrpcStatus.NOT_FOUND, details: 'no such key' });
    expect(outcomes[0]?.durationMs).toBeGreaterThanOrEqual(0);
    expect(logged).toEqual([{ message: '/pkg.Svc/Method: interceptor onCallEnd failed', fields: { error: 'metrics down' } }]);
  });

  it('ignores a failure after the call ended', () => {
    const { call: c } = call();
    c.run(() => 'ok');
    c.fail(new GrpcStatusError(GrpcStatus.INTERNAL, 'late'));
    expect(c.ended?.[0]).toBe(GrpcStatus.OK);
  });
});
