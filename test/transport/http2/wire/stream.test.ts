/**
 * The stream state machine (src/transport/http2/wire/stream.ts) against RFC 9113 §5.1: every
 * move from every state, each legal one with the state it leads to, each illegal one with
 * the error the RFC names for it (a stream or a connection error, and its code), and the
 * frames dropped on a closed stream. Then what the stream holds for the connection, which
 * moves it through methods only: no field of a stream can be written from outside.
 */
import { describe, expect, it } from 'vitest';
import { H2_ERROR } from '../../../../src/transport/http2/wire/frames.js';
import {
  type CloseCause,
  H2Stream,
  IGNORE,
  type StreamListener,
  type StreamOwner,
  type StreamState,
  type Verdict,
  recvOnClosed,
  recvOnIdle,
} from '../../../../src/transport/http2/wire/stream.js';

const owner: StreamOwner = {
  sendHeaders: () => undefined,
  sendData: () => true,
  sendTrailers: () => undefined,
  resetStream: () => undefined,
  returnWindow: () => undefined,
  releaseHeld: () => undefined,
};

const newStream = (charged = 0, contentLength = -1): H2Stream => new H2Stream(owner, 1, 65_535, 65_535, charged, contentLength);

/** The moves: a frame received or sent (ES: with END_STREAM), or the connection ending under the stream. */
const MOVES = {
  'recv HEADERS': (s: H2Stream) => s.recvHeaders(false),
  'recv HEADERS+ES': (s: H2Stream) => s.recvHeaders(true),
  'recv DATA': (s: H2Stream) => s.recvData(false),
  'recv DATA+ES': (s: H2Stream) => s.recvData(true),
  'recv RST_STREAM': (s: H2Stream) => s.recvRstStream(),
  'recv WINDOW_UPDATE': (s: H2Stream) => s.recvWindowUpdate(),
  'send HEADERS': (s: H2Stream) => s.sendHeaders(false),
  'send HEADERS+ES': (s: H2Stream) => s.sendHeaders(true),
  'send DATA': (s: H2Stream) => s.sendData(false),
  'send DATA+ES': (s: H2Stream) => s.sendData(true),
  'send RST_STREAM': (s: H2Stream) => s.sendRstStream(),
  'connection ends': (s: H2Stream) => s.connectionEnded(),
} as const;
type Move = keyof typeof MOVES;

/** A state, with the close cause where the stream is closed. */
type Where = Exclude<StreamState, 'closed'> | `closed: ${CloseCause}`;

/** How each state is reached from idle: legal moves, each checked as the table's own rows are. */
const PATHS: Record<Where, readonly Move[]> = {
  idle: [],
  open: ['recv HEADERS'],
  'half-closed (remote)': ['recv HEADERS+ES'],
  'half-closed (local)': ['recv HEADERS', 'send HEADERS+ES'],
  'closed: end-stream': ['recv HEADERS+ES', 'send HEADERS+ES'],
  'closed: reset-sent': ['recv HEADERS', 'send RST_STREAM'],
  'closed: reset-received': ['recv HEADERS', 'recv RST_STREAM'],
  'closed: connection-ended': ['recv HEADERS', 'connection ends'],
};

function where(stream: H2Stream): Where {
  return stream.state === 'closed' ? `closed: ${stream.closeCause as CloseCause}` : stream.state;
}

function reach(target: Where): H2Stream {
  const stream = newStream();
  for (const move of PATHS[target]) expect(MOVES[move](stream), move).toBeUndefined();
  expect(where(stream)).toBe(target);
  return stream;
}

/** What a move answers: the state it leads to (legal), IGNORE (dropped), or the error. */
type Outcome = Where | typeof IGNORE | { scope: 'stream' | 'connection'; code: number };
const streamError = (code: number) => ({ scope: 'stream', code }) as const;
const connectionError = (code: number) => ({ scope: 'connection', code }) as const;

const { PROTOCOL_ERROR, STREAM_CLOSED } = H2_ERROR;
/** §5.1, §6.1, §6.4: frames other than HEADERS and PRIORITY on an idle stream; a server opens none itself (§5.1.1). */
const IDLE = connectionError(PROTOCOL_ERROR);
/** §5.1: this side sends nothing but PRIORITY after its END_STREAM or a reset (what the peer would answer). */
const SENT_AFTER_END = streamError(STREAM_CLOSED);

/** From the peer's END_STREAM or RST_STREAM: a closed stream whose late frames are errors (§5.1 closed, §6.1). */
const CLOSED_BY_PEER: Record<Move, Outcome> = {
  'recv HEADERS': connectionError(STREAM_CLOSED),
  'recv HEADERS+ES': connectionError(STREAM_CLOSED),
  'recv DATA': streamError(STREAM_CLOSED),
  'recv DATA+ES': streamError(STREAM_CLOSED),
  'recv RST_STREAM': IGNORE,
  'recv WINDOW_UPDATE': IGNORE,
  'send HEADERS': SENT_AFTER_END,
  'send HEADERS+ES': SENT_AFTER_END,
  'send DATA': SENT_AFTER_END,
  'send DATA+ES': SENT_AFTER_END,
  'send RST_STREAM': SENT_AFTER_END,
  'connection ends': IGNORE,
};

/** After this side's RST_STREAM, or with the connection gone: every frame received is dropped (§5.1 closed). */
const CLOSED_HERE: Record<Move, Outcome> = {
  ...CLOSED_BY_PEER,
  'recv HEADERS': IGNORE,
  'recv HEADERS+ES': IGNORE,
  'recv DATA': IGNORE,
  'recv DATA+ES': IGNORE,
};

/** RFC 9113 §5.1 as a table: every move from every state. */
const TABLE: Record<Where, Record<Move, Outcome>> = {
  idle: {
    'recv HEADERS': 'open',
    'recv HEADERS+ES': 'half-closed (remote)',
    'recv DATA': IDLE,
    'recv DATA+ES': IDLE,
    'recv RST_STREAM': IDLE,
    'recv WINDOW_UPDATE': IDLE,
    'send HEADERS': IDLE,
    'send HEADERS+ES': IDLE,
    'send DATA': IDLE,
    'send DATA+ES': IDLE,
    'send RST_STREAM': IDLE,
    'connection ends': 'closed: connection-ended',
  },
  open: {
    // §8.1: a second header block is trailers, which must end the stream.
    'recv HEADERS': streamError(PROTOCOL_ERROR),
    'recv HEADERS+ES': 'half-closed (remote)',
    'recv DATA': 'open',
    'recv DATA+ES': 'half-closed (remote)',
    'recv RST_STREAM': 'closed: reset-received',
    'recv WINDOW_UPDATE': 'open',
    'send HEADERS': 'open',
    'send HEADERS+ES': 'half-closed (local)',
    'send DATA': 'open',
    'send DATA+ES': 'half-closed (local)',
    'send RST_STREAM': 'closed: reset-sent',
    'connection ends': 'closed: connection-ended',
  },
  'half-closed (remote)': {
    // §5.1: after the peer's END_STREAM only WINDOW_UPDATE, PRIORITY and RST_STREAM may come.
    'recv HEADERS': streamError(STREAM_CLOSED),
    'recv HEADERS+ES': streamError(STREAM_CLOSED),
    'recv DATA': streamError(STREAM_CLOSED),
    'recv DATA+ES': streamError(STREAM_CLOSED),
    'recv RST_STREAM': 'closed: reset-received',
    'recv WINDOW_UPDATE': 'half-closed (remote)',
    'send HEADERS': 'half-closed (remote)',
    'send HEADERS+ES': 'closed: end-stream',
    'send DATA': 'half-closed (remote)',
    'send DATA+ES': 'closed: end-stream',
    'send RST_STREAM': 'closed: reset-sent',
    'connection ends': 'closed: connection-ended',
  },
  'half-closed (local)': {
    'recv HEADERS': streamError(PROTOCOL_ERROR),
    'recv HEADERS+ES': 'closed: end-stream',
    'recv DATA': 'half-closed (local)',
    'recv DATA+ES': 'closed: end-stream',
    'recv RST_STREAM': 'closed: reset-received',
    'recv WINDOW_UPDATE': 'half-closed (local)',
    'send HEADERS': SENT_AFTER_END,
    'send HEADERS+ES': SENT_AFTER_END,
    'send DATA': SENT_AFTER_END,
    'send DATA+ES': SENT_AFTER_END,
    'send RST_STREAM': 'closed: reset-sent',
    'connection ends': 'closed: connection-ended',
  },
  'closed: end-stream': CLOSED_BY_PEER,
  'closed: reset-received': CLOSED_BY_PEER,
  'closed: reset-sent': CLOSED_HERE,
  'closed: connection-ended': CLOSED_HERE,
};

const ROWS = (Object.keys(TABLE) as Where[]).flatMap((from) =>
  (Object.keys(MOVES) as Move[]).map((move) => [from, move, describeOutcome(TABLE[from][move]), TABLE[from][move]] as const),
);

function describeOutcome(outcome: Outcome): string {
  if (outcome === IGNORE) return 'dropped';
  if (typeof outcome === 'string') return `-> ${outcome}`;
  const name = Object.entries(H2_ERROR).find(([, code]) => code === outcome.code)?.[0];
  return `${outcome.scope} error ${name}`;
}

describe('H2Stream state (RFC 9113 §5.1)', () => {
  it('the table has every move from every state', () => {
    expect(ROWS).toHaveLength(8 * 12);
    for (const [from, move] of ROWS) expect(TABLE[from][move], `${from}, ${move}`).toBeDefined();
  });

  it.each(ROWS)('%s, %s: %s', (from, move, _, outcome) => {
    const stream = reach(from);
    const verdict: Verdict = MOVES[move](stream);
    if (typeof outcome === 'string') {
      expect(verdict).toBeUndefined();
      expect(where(stream)).toBe(outcome);
      return;
    }
    // An illegal or dropped move leaves the state as it was, and says why.
    expect(where(stream)).toBe(from);
    if (outcome === IGNORE) return expect(verdict).toBe(IGNORE);
    expect(verdict).toMatchObject(outcome);
    expect(verdict === IGNORE ? '' : verdict?.reason).toMatch(/§\d/);
  });

  it('derives the half-closed views from the one state', () => {
    const views = (target: Where) => {
      const stream = reach(target);
      return [stream.closed, stream.recvClosed, stream.sendClosed];
    };
    expect(views('open')).toEqual([false, false, false]);
    expect(views('half-closed (remote)')).toEqual([false, true, false]);
    expect(views('half-closed (local)')).toEqual([false, false, true]);
    expect(views('closed: end-stream')).toEqual([true, true, true]);
    expect(reach('open').closeCause).toBeUndefined();
  });
});

describe('streams the connection holds no object for', () => {
  it.each(['DATA', 'RST_STREAM', 'WINDOW_UPDATE'] as const)('%s on an idle stream id: connection error PROTOCOL_ERROR (§5.1)', (frame) => {
    expect(recvOnIdle(frame)).toMatchObject(IDLE);
  });

  it('on a closed stream long forgotten: HEADERS reuses an id (connection error PROTOCOL_ERROR, §5.1.1), the rest is dropped', () => {
    expect(recvOnClosed('HEADERS', undefined)).toMatchObject(connectionError(PROTOCOL_ERROR));
    expect(recvOnClosed('DATA', undefined)).toBe(IGNORE);
    expect(recvOnClosed('RST_STREAM', undefined)).toBe(IGNORE);
    expect(recvOnClosed('WINDOW_UPDATE', undefined)).toBe(IGNORE);
  });

  it('answers a closed stream as a closed stream object does, by its cause', () => {
    const frames = {
      HEADERS: 'recv HEADERS+ES',
      DATA: 'recv DATA',
      RST_STREAM: 'recv RST_STREAM',
      WINDOW_UPDATE: 'recv WINDOW_UPDATE',
    } as const;
    for (const cause of ['end-stream', 'reset-sent', 'reset-received', 'connection-ended'] as const) {
      for (const [frame, move] of Object.entries(frames) as [keyof typeof frames, Move][]) {
        expect(recvOnClosed(frame, cause), `${frame} after ${cause}`).toBe(MOVES[move](reach(`closed: ${cause}`)));
      }
    }
  });
});

describe('what a stream holds for its connection', () => {
  it('queues DATA in order, and hands it out no larger than the room given', () => {
    const stream = reach('open');
    stream.enqueue(Buffer.from('abc'), Buffer.from('defg'), 7);
    expect([stream.hasQueued, stream.queuedBytes]).toEqual([true, 7]);
    expect(stream.dequeue(2).toString()).toBe('ab');
    expect(stream.dequeue(10).toString()).toBe('c');
    expect(stream.queuedBytes).toBe(4);
    expect(stream.dequeue(4).toString()).toBe('defg');
    expect([stream.hasQueued, stream.queuedBytes]).toEqual([false, 0]);
  });

  it('drops what waited to be sent, and releases what it was charged, once', () => {
    const stream = new H2Stream(owner, 1, 0, 65_535, 100);
    stream.recvHeaders(false);
    stream.received(30);
    stream.enqueue(Buffer.alloc(5), undefined, 5);
    expect(stream.holdHeaders(Buffer.alloc(7))).toBeUndefined();
    stream.holdTrailers(Buffer.alloc(11));
    expect([stream.hasHeldHeaders, stream.hasPendingTrailers]).toEqual([true, true]);
    expect(stream.dropUnsent()).toBe(5 + 7 + 11);
    expect(stream.releaseCharges()).toBe(130);
    expect([stream.dropUnsent(), stream.releaseCharges()]).toEqual([0, 0]);
    expect([stream.hasQueued, stream.hasHeldHeaders, stream.hasPendingTrailers]).toEqual([false, false, false]);
  });

  it('holds request bytes until released, and checks them against content-length (§8.1.1)', () => {
    const stream = newStream(0, 8);
    expect(stream.contentLengthMet).toBe(false);
    stream.received(5);
    expect(stream.takeHeld()).toBe(5);
    expect(stream.takeHeld()).toBe(0);
    stream.received(3);
    expect(stream.contentLengthMet).toBe(true);
    stream.received(1);
    expect(stream.contentLengthMet).toBe(false);
    expect(newStream().contentLengthMet).toBe(true);
  });

  it('tells its listener, and pays a drain only when one is owed', () => {
    const heard: string[] = [];
    const listener: StreamListener = {
      data: (chunk) => heard.push(`data ${chunk.toString()}`),
      inputEnd: () => heard.push('inputEnd'),
      streamClosed: () => heard.push('streamClosed'),
      drained: () => heard.push('drained'),
    };
    const stream = reach('open');
    stream.payDrain();
    stream.listener = listener;
    stream.deliver(Buffer.from('x'));
    stream.announceInputEnd();
    stream.payDrain();
    stream.oweDrain();
    stream.payDrain();
    stream.payDrain();
    stream.announceClosed();
    expect(heard).toEqual(['data x', 'inputEnd', 'drained', 'streamClosed']);
  });
});

describe('no field of a stream is written from outside', () => {
  it('has no own field but its id, and no setter but the listener the call registers', () => {
    const stream = reach('open');
    expect(Object.keys(stream)).toEqual(['id']);
    for (let proto = Object.getPrototypeOf(stream); proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
      for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
        if (name !== 'listener') expect(descriptor.set, `${proto.constructor.name}.${name}`).toBeUndefined();
      }
    }
  });

  it('refuses a write to what it shows (and the compiler refuses it first: npm run typecheck)', () => {
    const stream = reach('open');
    // @ts-expect-error the state moves by transitions only
    expect(() => (stream.state = 'closed')).toThrow(TypeError);
    // @ts-expect-error derived from the state
    expect(() => (stream.closed = true)).toThrow(TypeError);
    // @ts-expect-error moved by FlowWindows' methods only
    expect(() => (stream.sendWindow = 1 << 30)).toThrow(TypeError);
    // @ts-expect-error moved by enqueue and dequeue only
    expect(() => (stream.queuedBytes = 0)).toThrow(TypeError);
    expect(stream.state).toBe('open');
  });
});
