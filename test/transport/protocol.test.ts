/**
 * The gRPC over HTTP/2 protocol document, checked on the wire with a bare node:http2
 * client: request headers, Length-Prefixed-Message framing, compression, grpc-timeout,
 * Trailers-Only errors and metadata.
 */
import { connect as connectTcp } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { deflateSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallContext, GrpcStatusError, CallMetadata, GrpcStatus } from '../../src/contracts/handler-api.js';
import { PROBE } from './helpers/probe.js';
import {
  CLIENT_PREFACE,
  FRAME_FLAG,
  FRAME_TYPE,
  frame,
  grpcHeaders,
  h2Frame,
  hpackLiteral,
  rawCall,
  rawRequest,
  rawSession,
  requestBlock,
  unframe,
} from './helpers/raw.js';
import { closeAllServers, startHttp2 } from './helpers/servers.js';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const UNARY = '/test.Probe/Unary';

/** A google.rpc.Status as its bytes: code 5, message "no such key" (the handler API carries it as it is). */
const STATUS_DETAILS = Buffer.from('0805120b6e6f2073756368206b6579', 'hex');

/** What the last Unary handler saw, for the tests to inspect. */
let seen: { request: unknown; call: CallContext; signal: AbortSignal } | undefined;
const logger = recordingLogger();
let port: number;

async function unaryHandler(request: unknown, call: CallContext): Promise<unknown> {
  seen = { request, call, signal: call.signal };
  const op = (request as { op?: string } | null)?.op;
  switch (op) {
    case 'deadline':
      return { remainingMs: call.deadline - Date.now() };
    case 'wait':
      await new Promise((resolve) => call.signal.addEventListener('abort', resolve, { once: true }));
      return { aborted: true };
    case 'throw':
      throw new Error('database password is hunter2');
    case 'status':
      throw new GrpcStatusError(
        GrpcStatus.FAILED_PRECONDITION,
        '\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈 and 100% \t\n',
        {
          metadata: new CallMetadata().set('why-bin', Buffer.from([0, 1, 2, 255])),
        },
      );
    case 'metadata': {
      const entries = Object.fromEntries(
        [...call.metadata.entries()].map(([key, values]) => [
          key,
          values.map((v) => (typeof v === 'string' ? v : `bin:${v.toString('hex')}`)),
        ]),
      );
      call.sendMetadata(new CallMetadata().set('x-initial', 'hello').set('x-initial-bin', Buffer.from([1, 2, 3, 4])));
      call.setTrailers(new CallMetadata().add('x-trailing', 'a').add('x-trailing', 'b'));
      return entries;
    }
    case 'status-details':
      throw new GrpcStatusError(GrpcStatus.NOT_FOUND, 'no such key', {
        metadata: new CallMetadata().set('grpc-status-details-bin', STATUS_DETAILS),
      });
    case 'status-details-in-headers':
      try {
        call.sendMetadata(new CallMetadata().set('grpc-status-details-bin', STATUS_DETAILS));
        return { refused: false };
      } catch (err) {
        return { refused: (err as { code?: unknown }).code };
      }
    case 'compress':
      call.setResponseCompression('gzip');
      return { text: 'x'.repeat(1000) };
    case 'compress-br':
      try {
        call.setResponseCompression('br' as 'gzip');
        return { refused: false };
      } catch (err) {
        return { refused: { name: (err as Error).name, code: (err as { code?: unknown }).code, message: (err as Error).message } };
      }
    default:
      return request;
  }
}

beforeAll(async () => {
  ({ port } = await startHttp2([[PROBE, { Unary: unaryHandler, ServerStream: () => {}, ClientStream: () => ({}), Bidi: () => {} }]], {
    logger,
  }));
});

afterAll(closeAllServers);

describe('request headers', () => {
  it('serves application/grpc and application/grpc+proto', async () => {
    for (const contentType of ['application/grpc', 'application/grpc+proto']) {
      const res = await rawCall(port, { headers: grpcHeaders(UNARY, { 'content-type': contentType }), chunks: [frame(json({ hi: 1 }))] });
      expect(res.status).toBe(GrpcStatus.OK);
      expect(JSON.parse(unframe(res.body)[0]?.bytes.toString() ?? '')).toEqual({ hi: 1 });
    }
  });

  // application/json and application/grpc-web are Connect's and gRPC-Web's (connect.test.ts, grpc-web.test.ts).
  it.each(['text/plain', 'application/grpc-json', 'application/xml', undefined])(
    'answers HTTP 415 to content-type %s',
    async (contentType) => {
      const headers = grpcHeaders(UNARY);
      if (contentType === undefined) delete headers['content-type'];
      else headers['content-type'] = contentType;
      const res = await rawCall(port, { headers, chunks: [frame(json({}))] });
      expect(res.headers[':status']).toBe(415);
      expect(res.status).toBeUndefined();
    },
  );

  it('answers HTTP 405 to a method other than POST', async () => {
    const res = await rawCall(port, { headers: { ...grpcHeaders(UNARY), ':method': 'GET' } });
    expect(res.headers[':status']).toBe(405);
  });

  it('refuses a request without "te: trailers" with INTERNAL, as the protocol requires it', async () => {
    const headers = grpcHeaders(UNARY);
    delete headers.te;
    const res = await rawCall(port, { headers, chunks: [frame(json({}))] });
    expect(res.status).toBe(GrpcStatus.INTERNAL);
    expect(res.message).toMatch(/te: trailers/);
  });

  it('answers UNIMPLEMENTED naming an unknown service or method, as Trailers-Only', async () => {
    const service = await rawCall(port, { headers: grpcHeaders('/no.Such/Method'), chunks: [frame(json({}))] });
    expect(service).toMatchObject({ status: GrpcStatus.UNIMPLEMENTED, trailersOnly: true });
    expect(service.message).toBe('unknown service no.Such (method /no.Such/Method)');
    const method = await rawCall(port, { headers: grpcHeaders('/test.Probe/Nope'), chunks: [frame(json({}))] });
    expect(method).toMatchObject({ status: GrpcStatus.UNIMPLEMENTED, trailersOnly: true });
    expect(method.message).toBe('unknown method Nope of service test.Probe');
  });
});

const { HEADERS, CONTINUATION } = FRAME_TYPE;
const END_HEADERS = FRAME_FLAG.END_HEADERS;
const END_STREAM_AND_HEADERS = FRAME_FLAG.END_STREAM | FRAME_FLAG.END_HEADERS;
/** `GET /` (static :method GET, :scheme http, :path /) with its :authority: refused with 405 at once. */
const GET_BLOCK = Buffer.concat([Buffer.from([0x82, 0x86, 0x84]), hpackLiteral(':authority', 'localhost')]);
/** A gRPC request to Unary (POST, :path, content-type, te), ended with no message: answered by a call. */
const CALL_BLOCK = requestBlock(UNARY);

/**
 * On a bare TCP connection, in one write: the client preface, SETTINGS and `frames`.
 * Resolves once the server closes the connection, or 500 ms on.
 */
function sendFrames(frames: readonly Buffer[]): Promise<void> {
  return new Promise((resolve) => {
    const socket = connectTcp(port, '127.0.0.1', () => {
      socket.write(Buffer.concat([CLIENT_PREFACE, ...frames]));
    });
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, 500);
    socket.on('data', () => {});
    socket.on('close', done);
    socket.on('error', done);
  });
}

describe('frames no gRPC client sends (h2spec 5.1: a stream half-closed by the client)', () => {
  // Both frames in one read: the stream is half-closed by the client when the second
  // arrives. On node:http2 (before the own HTTP/2), nghttp2 closed the stream before the
  // 'stream' listener answered it, and the failed answer, an 'error' event without a
  // listener, ended the process.
  it.each([
    ['a second HEADERS', 'GET refused with 405', GET_BLOCK, HEADERS, END_STREAM_AND_HEADERS],
    ['a CONTINUATION', 'GET refused with 405', GET_BLOCK, CONTINUATION, END_HEADERS],
    ['a second HEADERS', 'gRPC call', CALL_BLOCK, HEADERS, END_STREAM_AND_HEADERS],
    ['a CONTINUATION', 'gRPC call', CALL_BLOCK, CONTINUATION, END_HEADERS],
  ])('%s on the stream of a %s: the connection ends, the server goes on serving', async (_what, _stream, block, type, flags) => {
    await sendFrames([h2Frame(HEADERS, END_STREAM_AND_HEADERS, 1, block), h2Frame(type, flags, 1, hpackLiteral('x', 'y'))]);
    const res = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({ after: 1 }))] });
    expect(res.status).toBe(GrpcStatus.OK);
    expect(JSON.parse(unframe(res.body)[0]?.bytes.toString() ?? '')).toEqual({ after: 1 });
  });
});

describe('grpc-timeout', () => {
  it.each([
    ['2H', 2 * 3_600_000],
    ['3M', 3 * 60_000],
    ['7S', 7000],
    ['4500m', 4500],
    ['6000000u', 6000],
    ['99999999n', 100],
  ])('reads %s as a deadline %d ms away', async (timeout, ms) => {
    const res = await rawCall(port, {
      headers: grpcHeaders(UNARY, { 'grpc-timeout': timeout }),
      chunks: [frame(json({ op: 'deadline' }))],
    });
    expect(res.status).toBe(GrpcStatus.OK);
    const { remainingMs } = JSON.parse(unframe(res.body)[0]?.bytes.toString() ?? '') as { remainingMs: number };
    expect(remainingMs).toBeLessThanOrEqual(ms);
    expect(remainingMs).toBeGreaterThan(ms - 1000);
  });

  it('without grpc-timeout the deadline is infinite', async () => {
    const res = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({ op: 'deadline' }))] });
    // JSON has no Infinity: it serializes as null.
    expect(JSON.parse(unframe(res.body)[0]?.bytes.toString() ?? '')).toEqual({ remainingMs: null });
  });

  it.each(['150m', '150000u', '99999999n'])(
    'ends a call still running after %s with DEADLINE_EXCEEDED and aborts its signal',
    async (timeout) => {
      const started = Date.now();
      const res = await rawCall(port, { headers: grpcHeaders(UNARY, { 'grpc-timeout': timeout }), chunks: [frame(json({ op: 'wait' }))] });
      expect(res).toMatchObject({ status: GrpcStatus.DEADLINE_EXCEEDED, trailersOnly: true });
      expect(Date.now() - started).toBeGreaterThanOrEqual(95);
      expect(seen?.signal.aborted).toBe(true);
      expect((seen!.signal.reason as GrpcStatusError).status).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    },
  );

  it.each(['1x', 'S', '123456789S', '-1S', '1.5S', '1 S', '0x1S'])('refuses a malformed grpc-timeout %j with INTERNAL', async (timeout) => {
    const res = await rawCall(port, { headers: grpcHeaders(UNARY, { 'grpc-timeout': timeout }), chunks: [frame(json({}))] });
    expect(res.status).toBe(GrpcStatus.INTERNAL);
    expect(res.message).toMatch(/malformed grpc-timeout/);
  });
});

describe('Length-Prefixed-Message', () => {
  it('reassembles a message sent one byte per DATA frame', async () => {
    const bytes = frame(json({ op: 'echo', text: 'slow' }));
    const chunks = [...bytes].map((byte) => Buffer.from([byte]));
    const res = await rawCall(port, { headers: grpcHeaders(UNARY), chunks });
    expect(res.status).toBe(GrpcStatus.OK);
    expect(JSON.parse(unframe(res.body)[0]?.bytes.toString() ?? '')).toEqual({ op: 'echo', text: 'slow' });
  });

  it('answers UNIMPLEMENTED to a unary call with no request message, or with two', async () => {
    const none = await rawCall(port, { headers: grpcHeaders(UNARY) });
    expect(none.status).toBe(GrpcStatus.UNIMPLEMENTED);
    expect(none.message).toMatch(/no request message/);
    const two = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json(1)), frame(json(2))] });
    expect(two.status).toBe(GrpcStatus.UNIMPLEMENTED);
    expect(two.message).toMatch(/second request message/);
  });

  it('answers INTERNAL when the request ends inside a message', async () => {
    const res = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({ a: 1 })).subarray(0, 8)] });
    expect(res.status).toBe(GrpcStatus.INTERNAL);
    expect(res.message).toMatch(/ended inside a message/);
  });

  it('refuses an oversized message from its prefix alone, RESOURCE_EXHAUSTED, without waiting for the body', async () => {
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(10 * 1024 * 1024, 1);
    // The client sends 5 + 100 bytes of a 10 MiB message and never ends the stream: an
    // answer can only come from the prefix.
    const res = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [prefix, Buffer.alloc(100)], end: false });
    expect(res).toMatchObject({ status: GrpcStatus.RESOURCE_EXHAUSTED, trailersOnly: true });
    expect(res.message).toBe('request message of 10485760 bytes exceeds the limit of 65536 bytes (maxReceiveMessageBytes)');
  });

  it("refuses a message that does not deserialize with the deserializer's status", async () => {
    const res = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(Buffer.from('{not json'))] });
    expect(res).toMatchObject({ status: GrpcStatus.INVALID_ARGUMENT, message: 'request is not JSON (9 bytes)', trailersOnly: true });
  });
});

describe('compression', () => {
  const body = { op: 'echo', text: 'z'.repeat(2000) };

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
  ] as const)('decompresses a %s request message', async (encoding, compress) => {
    const res = await rawCall(port, {
      headers: grpcHeaders(UNARY, { 'grpc-encoding': encoding }),
      chunks: [frame(compress(json(body)), true)],
    });
    expect(res.status).toBe(GrpcStatus.OK);
    expect(JSON.parse(unframe(res.body)[0]?.bytes.toString() ?? '')).toEqual(body);
  });

  it('takes uncompressed messages (flag 0) of a request that declares gzip', async () => {
    const res = await rawCall(port, { headers: grpcHeaders(UNARY, { 'grpc-encoding': 'gzip' }), chunks: [frame(json(body))] });
    expect(res.status).toBe(GrpcStatus.OK);
  });

  it('refuses a decompression bomb with RESOURCE_EXHAUSTED: output bounded by maxReceiveMessageBytes', async () => {
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(65_536);
    const res = await rawCall(port, { headers: grpcHeaders(UNARY, { 'grpc-encoding': 'gzip' }), chunks: [frame(bomb, true)] });
    expect(res.status).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(res.message).toMatch(/decompressed request message exceeds the limit of 65536 bytes/);
  });

  it('answers INTERNAL to a message that does not decompress', async () => {
    const res = await rawCall(port, {
      headers: grpcHeaders(UNARY, { 'grpc-encoding': 'gzip' }),
      chunks: [frame(Buffer.from('not gzip at all'), true)],
    });
    expect(res.status).toBe(GrpcStatus.INTERNAL);
    expect(res.message).toMatch(/could not decompress the gzip request message/);
  });

  it('answers INTERNAL to a compressed flag without grpc-encoding', async () => {
    const res = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(gzipSync(json(body)), true)] });
    expect(res.status).toBe(GrpcStatus.INTERNAL);
    expect(res.message).toMatch(/compressed flag set but the request has no grpc-encoding/);
  });

  it('answers UNIMPLEMENTED to an unknown encoding, listing the supported ones in grpc-accept-encoding', async () => {
    const res = await rawCall(port, { headers: grpcHeaders(UNARY, { 'grpc-encoding': 'snappy' }), chunks: [frame(json(body), true)] });
    expect(res.status).toBe(GrpcStatus.UNIMPLEMENTED);
    expect(res.message).toMatch(/grpc-encoding snappy is not supported/);
    expect(String(res.headers['grpc-accept-encoding']).split(',').sort()).toEqual(['deflate', 'gzip', 'identity']);
  });

  it('compresses a response when the handler asks and the client accepts gzip', async () => {
    const accepted = await rawCall(port, {
      headers: grpcHeaders(UNARY, { 'grpc-accept-encoding': 'identity, deflate, gzip' }),
      chunks: [frame(json({ op: 'compress' }))],
    });
    expect(accepted.headers['grpc-encoding']).toBe('gzip');
    const [message] = unframe(accepted.body);
    expect(message?.compressed).toBe(true);
    expect(JSON.parse(gunzipSync(message?.bytes ?? Buffer.alloc(0)).toString())).toEqual({ text: 'x'.repeat(1000) });

    const refused = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({ op: 'compress' }))] });
    expect(refused.headers['grpc-encoding']).toBeUndefined();
    expect(unframe(refused.body)[0]?.compressed).toBe(false);
  });

  it('refuses an encoding it does not have to the handler, with ERR_INVALID_ARGUMENT naming it', async () => {
    const res = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({ op: 'compress-br' }))] });
    expect(JSON.parse(unframe(res.body)[0]?.bytes.toString() ?? '')).toEqual({
      refused: { name: 'JwtGrpcError', code: 'ERR_INVALID_ARGUMENT', message: 'setResponseCompression: unknown encoding "br"' },
    });
  });
});

describe('errors and status messages', () => {
  it("sends an error as Trailers-Only with a percent-encoded grpc-message and the error's metadata", async () => {
    const res = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({ op: 'status' }))] });
    expect(res.trailersOnly).toBe(true);
    expect(res.headers['content-type']).toBe('application/grpc');
    expect(res.status).toBe(GrpcStatus.FAILED_PRECONDITION);
    const raw = String(res.headers['grpc-message']);
    expect(raw).toMatch(/^[\x20-\x7e]*$/);
    expect(raw).toContain('%09%0Atest with whitespace%0D%0A');
    expect(raw).toContain('100%25');
    expect(res.message).toBe('\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈 and 100% \t\n');
    expect(Buffer.from(String(res.headers['why-bin']), 'base64')).toEqual(Buffer.from([0, 1, 2, 255]));
  });

  it("carries an error's google.rpc.Status in the grpc-status-details-bin trailer, and refuses it in response headers", async () => {
    const res = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({ op: 'status-details' }))] });
    expect(res).toMatchObject({ status: GrpcStatus.NOT_FOUND, message: 'no such key' });
    expect(Buffer.from(String(res.headers['grpc-status-details-bin']), 'base64')).toEqual(STATUS_DETAILS);
    const inHeaders = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({ op: 'status-details-in-headers' }))] });
    expect(JSON.parse(unframe(inHeaders.body)[0]?.bytes.toString() ?? '')).toEqual({ refused: 'ERR_INVALID_ARGUMENT' });
  });

  it("answers a handler's plain Error with INTERNAL and a generic message, and logs it", async () => {
    const res = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({ op: 'throw' }))] });
    expect(res).toMatchObject({ status: GrpcStatus.INTERNAL, message: '/test.Probe/Unary: internal error' });
    expect(logger.lines.some((line) => line.level === 'error' && JSON.stringify(line.fields).includes('hunter2'))).toBe(true);
  });
});

describe('metadata', () => {
  it("exposes custom and -bin request metadata (padded or not, repeated, comma-joined) without gRPC's own headers", async () => {
    const session = await rawSession(port);
    try {
      const res = await rawRequest(session, {
        headers: {
          ...grpcHeaders(UNARY, { 'grpc-timeout': '10S', 'grpc-accept-encoding': 'gzip', 'user-agent': 'raw-test/1' }),
          'x-plain': ['one', 'two, with comma'],
          'x-padded-bin': Buffer.from([0xff, 0xee]).toString('base64'),
          'x-unpadded-bin': Buffer.from([0xff, 0xee]).toString('base64').replace(/=+$/, ''),
          'x-joined-bin': `${Buffer.from('ab').toString('base64')},${Buffer.from('cd').toString('base64')}`,
        },
        chunks: [frame(json({ op: 'metadata' }))],
      });
      expect(res.status).toBe(GrpcStatus.OK);
      const seenMetadata = JSON.parse(unframe(res.body)[0]?.bytes.toString() ?? '') as Record<string, string[]>;
      expect(seenMetadata).toEqual({
        'user-agent': ['raw-test/1'],
        'x-plain': ['one', 'two, with comma'],
        'x-padded-bin': ['bin:ffee'],
        'x-unpadded-bin': ['bin:ffee'],
        'x-joined-bin': ['bin:6162', 'bin:6364'],
      });
      // Response metadata: headers from sendMetadata, trailers from setTrailers, -bin unpadded.
      expect(res.trailersOnly).toBe(false);
      expect(res.headers['x-initial']).toBe('hello');
      expect(res.headers['x-initial-bin']).toBe('AQIDBA');
      expect(res.trailers?.['x-trailing']).toBe('a, b');
      expect(res.trailers?.['grpc-status']).toBe('0');
    } finally {
      session.close();
    }
  });

  it('resets a request whose headers exceed maxHeaderListBytes, and goes on serving', async () => {
    const session = await rawSession(port);
    try {
      const big = rawRequest(session, { headers: { ...grpcHeaders(UNARY), 'x-big': 'v'.repeat(20_000) }, chunks: [frame(json({}))] });
      await expect(big).rejects.toThrow(/without a response/);
    } finally {
      session.destroy();
    }
    const res = await rawCall(port, { headers: grpcHeaders(UNARY), chunks: [frame(json({ ok: true }))] });
    expect(res.status).toBe(GrpcStatus.OK);
  });
});

describe('early server closure', () => {
  it('follows a Trailers-Only answer to a client still sending with RST_STREAM NO_ERROR', async () => {
    const session = await rawSession(port);
    try {
      const stream = session.request(grpcHeaders('/no.Such/Method'), { endStream: false });
      stream.write(frame(json({})));
      const closed = new Promise<number>((resolve) => stream.on('close', () => resolve(stream.rstCode ?? -1)));
      stream.on('response', () => {});
      stream.on('data', () => {});
      stream.on('error', () => {});
      // The client never half-closes; the server's RST_STREAM is what closes the stream.
      expect(await Promise.race([closed, sleep(2000).then(() => 'timeout')])).toBe(0);
    } finally {
      session.close();
    }
  });
});
