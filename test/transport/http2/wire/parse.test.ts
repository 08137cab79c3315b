/**
 * Reading frames (RFC 9113 §4.1, §6): a whole frame or nothing from a partial buffer, padding
 * taken off, and every malformed frame refused with the connection error code §6 names.
 */
import { describe, expect, it } from 'vitest';
import {
  ConnectionError,
  FLAG,
  FRAME,
  H2_ERROR,
  SETTING,
  frame,
  frameHeader,
  settingsFrame,
} from '../../../../src/transport/http2/wire/frames.js';
import { MAX_SETTINGS_ENTRIES } from '../../../../src/transport/http2/wire/limits.js';
import {
  FrameFields,
  SettingsFields,
  readData,
  readFrame,
  readGoaway,
  readHeaders,
  readPing,
  readPriority,
  readRstStream,
  readSettings,
  readWindowUpdate,
} from '../../../../src/transport/http2/wire/parse.js';

/** Reads the one frame in `bytes`. */
function fields(bytes: Buffer): FrameFields {
  const f = new FrameFields();
  expect(readFrame(bytes, 0, f)).toBe(true);
  return f;
}

function refusal(action: () => unknown): [number, string] {
  try {
    action();
  } catch (err) {
    if (err instanceof ConnectionError) return [err.code, err.message];
    throw err;
  }
  throw new Error('not refused');
}

const u32 = (...values: number[]): Buffer =>
  Buffer.concat(values.map((v) => Buffer.from([v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255])));

describe('readFrame', () => {
  it('reads the header at an offset and masks the reserved bit of the stream id', () => {
    const bytes = Buffer.concat([Buffer.from('xx'), frameHeader(3, FRAME.DATA, FLAG.END_STREAM, 0x80000005), Buffer.from('abc')]);
    const f = new FrameFields();
    expect(readFrame(bytes, 2, f)).toBe(true);
    expect({ ...f }).toEqual({ type: FRAME.DATA, flags: FLAG.END_STREAM, streamId: 5, start: 11, end: 14 });
  });

  it('says false, reading nothing, until the whole header and payload are there', () => {
    const whole = frame(FRAME.PING, 0, 0, Buffer.alloc(8));
    const f = new FrameFields();
    expect(readFrame(whole.subarray(0, 8), 0, f)).toBe(false);
    expect(readFrame(whole.subarray(0, 16), 0, f)).toBe(false);
    expect(f.end).toBe(0);
  });

  it('refuses a frame over 16384 bytes from its header alone with FRAME_SIZE_ERROR', () => {
    expect(refusal(() => readFrame(frameHeader(16_385, FRAME.DATA, 0, 1), 0, new FrameFields()))).toEqual([
      H2_ERROR.FRAME_SIZE_ERROR,
      'frame of 16385 bytes exceeds SETTINGS_MAX_FRAME_SIZE',
    ]);
    expect(readFrame(frameHeader(16_384, FRAME.DATA, 0, 1), 0, new FrameFields())).toBe(false);
  });
});

describe('readData and readHeaders', () => {
  it('takes the padding off a padded DATA frame', () => {
    const bytes = frame(FRAME.DATA, FLAG.PADDED, 1, Buffer.concat([Buffer.from([2]), Buffer.from('hi'), Buffer.alloc(2)]));
    const f = fields(bytes);
    readData(bytes, f);
    expect(bytes.subarray(f.start, f.end).toString()).toBe('hi');
  });

  it('refuses DATA and HEADERS on stream 0, and padding as long as the frame', () => {
    const data0 = frame(FRAME.DATA, 0, 0, Buffer.from('x'));
    expect(refusal(() => readData(data0, fields(data0)))).toEqual([H2_ERROR.PROTOCOL_ERROR, 'DATA on stream 0']);
    const headers0 = frame(FRAME.HEADERS, 0, 0, Buffer.from('x'));
    expect(refusal(() => readHeaders(headers0, fields(headers0)))).toEqual([H2_ERROR.PROTOCOL_ERROR, 'HEADERS on stream 0']);
    const allPad = frame(FRAME.DATA, FLAG.PADDED, 1, Buffer.from([3, 0, 0]));
    expect(refusal(() => readData(allPad, fields(allPad)))).toEqual([H2_ERROR.PROTOCOL_ERROR, 'padding as long as the frame']);
    const noPadLength = frame(FRAME.DATA, FLAG.PADDED, 1, Buffer.alloc(0));
    expect(refusal(() => readData(noPadLength, fields(noPadLength)))).toEqual([
      H2_ERROR.FRAME_SIZE_ERROR,
      'padded frame without a pad length',
    ]);
  });

  it('skips the priority fields of HEADERS and says whether the stream depends on itself', () => {
    const other = frame(FRAME.HEADERS, FLAG.PRIORITY, 3, Buffer.concat([u32(1), Buffer.from([16]), Buffer.from('block')]));
    let f = fields(other);
    expect(readHeaders(other, f)).toBe(false);
    expect(other.subarray(f.start, f.end).toString()).toBe('block');
    const self = frame(FRAME.HEADERS, FLAG.PRIORITY, 3, Buffer.concat([u32(0x80000003), Buffer.from([16])]));
    expect(readHeaders(self, fields(self))).toBe(true);
    const plain = frame(FRAME.HEADERS, 0, 3, Buffer.from('block'));
    f = fields(plain);
    expect(readHeaders(plain, f)).toBe(false);
    expect(plain.subarray(f.start, f.end).toString()).toBe('block');
  });

  it('refuses HEADERS too short for its priority with FRAME_SIZE_ERROR', () => {
    const short = frame(FRAME.HEADERS, FLAG.PRIORITY, 3, Buffer.alloc(4));
    expect(refusal(() => readHeaders(short, fields(short)))).toEqual([H2_ERROR.FRAME_SIZE_ERROR, 'HEADERS too short for its priority']);
  });
});

describe('readPriority and readRstStream', () => {
  it('answers a PRIORITY with the stream error to send, or 0', () => {
    const ok = frame(FRAME.PRIORITY, 0, 3, Buffer.concat([u32(1), Buffer.from([0])]));
    expect(readPriority(ok, fields(ok))).toBe(0);
    const self = frame(FRAME.PRIORITY, 0, 3, Buffer.concat([u32(3), Buffer.from([0])]));
    expect(readPriority(self, fields(self))).toBe(H2_ERROR.PROTOCOL_ERROR);
    const short = frame(FRAME.PRIORITY, 0, 3, Buffer.alloc(4));
    expect(readPriority(short, fields(short))).toBe(H2_ERROR.FRAME_SIZE_ERROR);
    const zero = frame(FRAME.PRIORITY, 0, 0, Buffer.alloc(5));
    expect(refusal(() => readPriority(zero, fields(zero)))).toEqual([H2_ERROR.PROTOCOL_ERROR, 'PRIORITY on stream 0']);
  });

  it('reads the code of RST_STREAM, refusing a wrong length or stream 0', () => {
    const ok = frame(FRAME.RST_STREAM, 0, 1, u32(H2_ERROR.CANCEL));
    expect(readRstStream(ok, fields(ok))).toBe(H2_ERROR.CANCEL);
    const long = frame(FRAME.RST_STREAM, 0, 1, Buffer.alloc(5));
    expect(refusal(() => readRstStream(long, fields(long)))).toEqual([H2_ERROR.FRAME_SIZE_ERROR, 'RST_STREAM of the wrong length']);
    const zero = frame(FRAME.RST_STREAM, 0, 0, u32(0));
    expect(refusal(() => readRstStream(zero, fields(zero)))).toEqual([H2_ERROR.PROTOCOL_ERROR, 'RST_STREAM on stream 0']);
  });
});

describe('readSettings', () => {
  function read(bytes: Buffer): SettingsFields {
    const into = new SettingsFields();
    expect(readSettings(bytes, fields(bytes), into)).toBe(true);
    return into;
  }

  it('reads the settings the server acts on, the smallest header table size of several, and ignores unknown ids', () => {
    const into = read(
      settingsFrame([
        [SETTING.HEADER_TABLE_SIZE, 4096],
        [SETTING.HEADER_TABLE_SIZE, 0],
        [SETTING.HEADER_TABLE_SIZE, 100],
        [SETTING.INITIAL_WINDOW_SIZE, 1_000_000],
        [SETTING.MAX_FRAME_SIZE, 32_768],
        [SETTING.MAX_CONCURRENT_STREAMS, 5],
        [0xff, 1],
      ]),
    );
    expect({ ...into }).toEqual({ headerTableSize: 0, initialWindowSize: 1_000_000, maxFrameSize: 32_768 });
  });

  it('resets what an earlier SETTINGS frame set', () => {
    const into = new SettingsFields();
    const first = settingsFrame([[SETTING.INITIAL_WINDOW_SIZE, 10]]);
    readSettings(first, fields(first), into);
    const second = settingsFrame([]);
    readSettings(second, fields(second), into);
    expect(into.initialWindowSize).toBe(-1);
  });

  it('says false for an empty ack', () => {
    const ack = frame(FRAME.SETTINGS, FLAG.ACK, 0, Buffer.alloc(0));
    expect(readSettings(ack, fields(ack), new SettingsFields())).toBe(false);
  });

  const refused: [string, Buffer, number, string][] = [
    ['on a stream', frame(FRAME.SETTINGS, 0, 1, Buffer.alloc(0)), H2_ERROR.PROTOCOL_ERROR, 'SETTINGS on a stream'],
    [
      'an ack with a payload',
      frame(FRAME.SETTINGS, FLAG.ACK, 0, Buffer.alloc(6)),
      H2_ERROR.FRAME_SIZE_ERROR,
      'SETTINGS ack with a payload',
    ],
    [
      'a payload not of 6-byte entries',
      frame(FRAME.SETTINGS, 0, 0, Buffer.alloc(7)),
      H2_ERROR.FRAME_SIZE_ERROR,
      'SETTINGS payload not a multiple of 6',
    ],
    [
      'too many entries',
      settingsFrame(Array.from({ length: MAX_SETTINGS_ENTRIES + 1 }, () => [0xff, 0] as const)),
      H2_ERROR.ENHANCE_YOUR_CALM,
      `SETTINGS of more than ${MAX_SETTINGS_ENTRIES} entries`,
    ],
    ['ENABLE_PUSH of 2', settingsFrame([[SETTING.ENABLE_PUSH, 2]]), H2_ERROR.PROTOCOL_ERROR, 'SETTINGS_ENABLE_PUSH other than 0 or 1'],
    [
      'a window above 2^31 - 1',
      settingsFrame([[SETTING.INITIAL_WINDOW_SIZE, 2 ** 31]]),
      H2_ERROR.FLOW_CONTROL_ERROR,
      'SETTINGS_INITIAL_WINDOW_SIZE above 2^31 - 1',
    ],
    [
      'MAX_FRAME_SIZE below 16384',
      settingsFrame([[SETTING.MAX_FRAME_SIZE, 16_383]]),
      H2_ERROR.PROTOCOL_ERROR,
      'SETTINGS_MAX_FRAME_SIZE out of range',
    ],
    [
      'MAX_FRAME_SIZE above 2^24 - 1',
      settingsFrame([[SETTING.MAX_FRAME_SIZE, 2 ** 24]]),
      H2_ERROR.PROTOCOL_ERROR,
      'SETTINGS_MAX_FRAME_SIZE out of range',
    ],
  ];
  for (const [what, bytes, code, message] of refused) {
    it(`refuses SETTINGS ${what}`, () => {
      expect(refusal(() => readSettings(bytes, fields(bytes), new SettingsFields()))).toEqual([code, message]);
    });
  }

  it('takes exactly the most entries allowed, and the bounds of each range', () => {
    read(settingsFrame(Array.from({ length: MAX_SETTINGS_ENTRIES }, () => [0xff, 0] as const)));
    read(
      settingsFrame([
        [SETTING.ENABLE_PUSH, 1],
        [SETTING.INITIAL_WINDOW_SIZE, 2 ** 31 - 1],
        [SETTING.MAX_FRAME_SIZE, 2 ** 24 - 1],
      ]),
    );
  });
});

describe('readPing, readGoaway and readWindowUpdate', () => {
  it('takes an 8-byte PING on stream 0 only', () => {
    const ok = frame(FRAME.PING, 0, 0, Buffer.alloc(8));
    expect(() => readPing(fields(ok))).not.toThrow();
    expect(refusal(() => readPing(fields(frame(FRAME.PING, 0, 0, Buffer.alloc(7)))))).toEqual([
      H2_ERROR.FRAME_SIZE_ERROR,
      'PING of the wrong length',
    ]);
    expect(refusal(() => readPing(fields(frame(FRAME.PING, 0, 1, Buffer.alloc(8)))))).toEqual([
      H2_ERROR.PROTOCOL_ERROR,
      'PING on a stream',
    ]);
  });

  it('reads the error code of GOAWAY, refusing one on a stream or too short', () => {
    const ok = frame(FRAME.GOAWAY, 0, 0, Buffer.concat([u32(7, H2_ERROR.ENHANCE_YOUR_CALM), Buffer.from('debug')]));
    expect(readGoaway(ok, fields(ok))).toBe(H2_ERROR.ENHANCE_YOUR_CALM);
    const onStream = frame(FRAME.GOAWAY, 0, 1, u32(0, 0));
    expect(refusal(() => readGoaway(onStream, fields(onStream)))).toEqual([H2_ERROR.PROTOCOL_ERROR, 'GOAWAY on a stream']);
    const short = frame(FRAME.GOAWAY, 0, 0, Buffer.alloc(7));
    expect(refusal(() => readGoaway(short, fields(short)))).toEqual([H2_ERROR.FRAME_SIZE_ERROR, 'GOAWAY too short']);
  });

  it('reads the 31-bit increment of WINDOW_UPDATE, refusing a wrong length', () => {
    const ok = frame(FRAME.WINDOW_UPDATE, 0, 1, u32(0x80000010));
    expect(readWindowUpdate(ok, fields(ok))).toBe(16);
    const long = frame(FRAME.WINDOW_UPDATE, 0, 1, Buffer.alloc(5));
    expect(refusal(() => readWindowUpdate(long, fields(long)))).toEqual([H2_ERROR.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of the wrong length']);
  });
});
