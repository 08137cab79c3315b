/**
 * Http2Call, one gRPC call on one HTTP/2 stream, on a stand-in stream that records what the
 * call sends: the unary and server-streaming flows, every refusal of the request side with
 * its status and message, and the endings the handler does not choose (deadline, the client's
 * cancel, the server's). What the stand-in cannot show, the bytes on a real connection, flow
 * control, compression and client-streaming back-pressure, is covered over loopback by
 * test/transport/http2/{deadlines,compression,framing,metadata,request-queue}.test.ts,
 * test/transport/calls.test.ts and test/transport/request-trailers.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { type CallContext, GrpcStatus, GrpcStatusError, type ResponseStream } from '../../../src/contracts/handler-api.js';
import { Http2Call } from '../../../src/transport/http2/call.js';
import { Deadlines } from '../../../src/transport/http2/deadlines.js';
import { resolveHttp2Options } from '../../../src/transport/http2/options.js';
import type { CallKind, Route } from '../../../src/transport/http2/router.js';
import type { H2Stream, RequestHeaders } from '../../../src/transport/http2/wire/stream.js';

const options = resolveHttp2Options({ logger: { info() {}, warn() {}, error() {} }, maxReceiveMessageBytes: 1024 });
const METHOD = '/demo.Echo/Say';
const CANCEL = 0x8;

class FakeStream {
  readonly sent: unknown[][] = [];
  closed = false;
  listener: unknown;
  respond(headers: unknown, endStream: boolean): void {
    this.sent.push(['respond', headers, endStream]);
  }
  write(...chunks: Buffer[]): boolean {
    this.sent.push(['write', Buffer.concat(chunks).toString('hex')]);
    return true;
  }
  end(trailers: unknown): void {
    this.sent.push(['end', trailers]);
  }
  reset(code: number): void {
    this.sent.push(['reset', code]);
  }
  release(): void {}
  pause(): void {}
  resume(): void {}
}

const frame = (text: string, compressed = 0): Buffer => {
  const body = Buffer.from(text);
  const prefix = Buffer.alloc(5);
  prefix[0] = compressed;
  prefix.writeUInt32BE(body.length, 1);
  return Buffer.concat([prefix, body]);
};
const hexFrame = (text: string): string => frame(text).toString('hex');
const OK_HEADERS = { ':status': 200, 'content-type': 'application/grpc' };
const refusal = (status: number, message: string) => [
  'respond',
  { ...OK_HEADERS, 'grpc-status': String(status), 'grpc-message': message },
  true,
];

function call(
  handler: (request: unknown, ctx: CallContext & ResponseStream<unknown>) => unknown,
  more: { kind?: CallKind; timeoutMs?: number; headers?: Partial<RequestHeaders> } = {},
) {
  const stream = new FakeStream();
  const route: Route = {
    path: METHOD,
    kind: more.kind ?? 'unary',
    handler: handler as Route['handler'],
    definition: {
      path: METHOD,
      requestStream: false,
      responseStream: more.kind === 'server-stream',
      requestDeserialize: (b: Buffer) => {
        const text = b.toString();
        if (text === 'bad') throw new Error('not a greeting');
        return text;
      },
      responseSerialize: (v: unknown) => Buffer.from(String(v)),
    },
  };
  const session = {
    calls: new Set<Http2Call>(),
    callClosed: vi.fn(),
    peer: '127.0.0.1:1',
    caller: undefined,
    noteResponse: vi.fn(),
    requestStarted: () => 0,
  };
  const headers = { ':method': 'POST', ':path': METHOD, te: 'trailers', ...more.headers } as RequestHeaders;
  const c = new Http2Call(
    stream as unknown as H2Stream,
    route,
    { options, deadlines: new Deadlines() },
    session,
    headers,
    [],
    'identity',
    more.timeoutMs ?? Number.POSITIVE_INFINITY,
  );
  c.start();
  return { c, stream, session };
}

describe('a unary call', () => {
  it('runs the handler on the one request and answers headers, the message and OK trailers', async () => {
    const handler = vi.fn(async (request: unknown) => `hello ${request}`);
    const { c, stream, session } = call(handler);
    expect(session.calls.has(c)).toBe(true);
    c.data(frame('ada'));
    c.inputEnd();
    await vi.waitFor(() => expect(stream.sent).toHaveLength(3));
    expect(handler).toHaveBeenCalledWith('ada', c);
    expect(stream.sent).toEqual([
      ['respond', OK_HEADERS, false],
      ['write', hexFrame('hello ada')],
      ['end', { 'grpc-status': '0' }],
    ]);
    expect(session.noteResponse).toHaveBeenCalled();
  });

  it('takes a message split across DATA chunks', async () => {
    const { c, stream } = call(async (r) => r);
    const bytes = frame('split');
    c.data(bytes.subarray(0, 3));
    c.data(bytes.subarray(3));
    c.inputEnd();
    await vi.waitFor(() => expect(stream.sent[1]).toEqual(['write', hexFrame('split')]));
  });

  it("answers a handler's GrpcStatusError as a trailers-only response", async () => {
    const { c, stream } = call(async () => {
      throw new GrpcStatusError(GrpcStatus.NOT_FOUND, 'no such greeting');
    });
    c.data(frame('x'));
    c.inputEnd();
    await vi.waitFor(() => expect(stream.sent).toEqual([refusal(GrpcStatus.NOT_FOUND, 'no such greeting')]));
  });

  it.each([
    [
      'no request message',
      (c: Http2Call) => c.inputEnd(),
      GrpcStatus.UNIMPLEMENTED,
      `received no request message for ${METHOD}, which takes one`,
    ],
    [
      'a second request message',
      (c: Http2Call) => c.data(Buffer.concat([frame('a'), frame('b')])),
      GrpcStatus.UNIMPLEMENTED,
      `received a second request message for ${METHOD}, which takes one`,
    ],
    [
      'a request ending inside a message',
      (c: Http2Call) => (c.data(frame('abc').subarray(0, 6)), c.inputEnd()),
      GrpcStatus.INTERNAL,
      'the request ended inside a message',
    ],
    [
      'a compressed message without grpc-encoding',
      (c: Http2Call) => c.data(frame('a', 1)),
      GrpcStatus.INTERNAL,
      'request message has the compressed flag set but the request has no grpc-encoding',
    ],
    [
      'a message that does not parse',
      (c: Http2Call) => (c.data(frame('bad')), c.inputEnd()),
      GrpcStatus.INTERNAL,
      `could not parse the request message of ${METHOD}: not a greeting`,
    ],
  ])('refuses %s, and never runs the handler', async (_name, act, status, message) => {
    const handler = vi.fn();
    const { c, stream } = call(handler);
    act(c);
    await vi.waitFor(() => expect(stream.sent).toEqual([refusal(status, message)]));
    expect(handler).not.toHaveBeenCalled();
  });

  it('refuses a message over maxReceiveMessageBytes with RESOURCE_EXHAUSTED', async () => {
    const { c, stream } = call(vi.fn());
    c.data(frame('x'.repeat(1025)));
    await vi.waitFor(() => expect(stream.sent).toHaveLength(1));
    expect(stream.sent[0]).toMatchObject(['respond', { 'grpc-status': String(GrpcStatus.RESOURCE_EXHAUSTED) }, true]);
  });
});

describe('a server-streaming call', () => {
  it('sends headers once, each message, and OK when the handler returns', async () => {
    const { c, stream } = call(
      async (request, ctx) => {
        await ctx.write(`${request} 1`);
        await ctx.write(`${request} 2`);
      },
      { kind: 'server-stream' },
    );
    c.data(frame('n'));
    c.inputEnd();
    await vi.waitFor(() => expect(stream.sent).toHaveLength(4));
    expect(stream.sent).toEqual([
      ['respond', OK_HEADERS, false],
      ['write', hexFrame('n 1')],
      ['write', hexFrame('n 2')],
      ['end', { 'grpc-status': '0' }],
    ]);
  });
});

describe('endings the handler does not choose', () => {
  it('the deadline ends the call DEADLINE_EXCEEDED and aborts the handler', async () => {
    let signal: AbortSignal | undefined;
    const { c, stream } = call(
      (_r, ctx) => {
        signal = ctx.signal;
        return new Promise(() => {});
      },
      { timeoutMs: 30, headers: { 'grpc-timeout': '30m' } },
    );
    c.data(frame('x'));
    c.inputEnd();
    await vi.waitFor(() => expect(stream.sent).toEqual([refusal(GrpcStatus.DEADLINE_EXCEEDED, 'deadline exceeded (grpc-timeout 30m)')]));
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toMatchObject({ status: GrpcStatus.DEADLINE_EXCEEDED });
  });

  it("the client's cancel aborts the handler CANCELLED, leaves the session, and sends nothing", async () => {
    let signal: AbortSignal | undefined;
    const { c, stream, session } = call((_r, ctx) => {
      signal = ctx.signal;
      return new Promise(() => {});
    });
    c.data(frame('x'));
    c.inputEnd();
    await vi.waitFor(() => expect(signal).toBeDefined());
    stream.closed = true;
    c.streamClosed();
    expect(session.callClosed).toHaveBeenCalledWith(c);
    expect(signal?.reason).toMatchObject({ status: GrpcStatus.CANCELLED, details: `${METHOD}: cancelled by the client` });
    expect(stream.sent).toEqual([]);
  });

  it("the server's cancel resets the stream with CANCEL and aborts the handler UNAVAILABLE", async () => {
    let signal: AbortSignal | undefined;
    const { c, stream } = call((_r, ctx) => {
      signal = ctx.signal;
      return new Promise(() => {});
    });
    c.data(frame('x'));
    c.inputEnd();
    await vi.waitFor(() => expect(signal).toBeDefined());
    c.cancelByServer('the server is shutting down');
    expect(stream.sent).toEqual([['reset', CANCEL]]);
    expect(signal?.reason).toMatchObject({ status: GrpcStatus.UNAVAILABLE, details: 'the server is shutting down' });
  });

  it('a write after the call has ended is refused FAILED_PRECONDITION', async () => {
    let ctx: ResponseStream<unknown> | undefined;
    const { c, stream } = call(
      async (_r, context) => {
        ctx = context;
      },
      { kind: 'server-stream' },
    );
    c.data(frame('x'));
    c.inputEnd();
    await vi.waitFor(() => expect(stream.sent.at(-1)?.[0]).toBe('respond'));
    await expect(ctx?.write('late')).rejects.toMatchObject({
      status: GrpcStatus.FAILED_PRECONDITION,
      details: `${METHOD}: the call has ended`,
    });
  });
});
