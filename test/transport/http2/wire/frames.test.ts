/**
 * The few frames this server builds (RFC 9113 §4.1, §6): the 9-byte header with its 24-bit
 * length, and SETTINGS, WINDOW_UPDATE, RST_STREAM and GOAWAY laid out byte for byte.
 */
import { describe, expect, it } from 'vitest';
import {
  ConnectionError,
  FLAG,
  FRAME,
  H2_ERROR,
  SETTING,
  SETTINGS_ACK,
  frame,
  frameHeader,
  goawayFrame,
  rstStreamFrame,
  settingsFrame,
  windowUpdateFrame,
} from '../../../../src/transport/http2/wire/frames.js';

const hex = (buffer: Buffer): string => buffer.toString('hex');

describe('frame builders', () => {
  it('lays out the 9-byte header: 24-bit length, type, flags, 31-bit stream id', () => {
    expect(hex(frameHeader(0x123456, FRAME.HEADERS, FLAG.END_HEADERS, 0x01020304))).toBe('123456010401020304');
  });

  it('puts the payload after the header with its length', () => {
    expect(hex(frame(FRAME.DATA, FLAG.END_STREAM, 1, Buffer.from('hi')))).toBe('000002000100000001' + '6869');
  });

  it('builds SETTINGS of 6-byte entries on stream 0, and the empty ack', () => {
    expect(
      hex(
        settingsFrame([
          [SETTING.MAX_CONCURRENT_STREAMS, 100],
          [SETTING.INITIAL_WINDOW_SIZE, 0x10000],
        ]),
      ),
    ).toBe('00000c040000000000' + '000300000064' + '000400010000');
    expect(hex(settingsFrame([]))).toBe('000000040000000000');
    expect(hex(SETTINGS_ACK)).toBe('000000040100000000');
  });

  it('builds WINDOW_UPDATE, RST_STREAM and GOAWAY with their 4- and 8-byte payloads', () => {
    expect(hex(windowUpdateFrame(3, 1000))).toBe('000004080000000003' + '000003e8');
    expect(hex(rstStreamFrame(5, H2_ERROR.CANCEL))).toBe('000004030000000005' + '00000008');
    expect(hex(goawayFrame(7, H2_ERROR.ENHANCE_YOUR_CALM, Buffer.from('x')))).toBe('000009070000000000' + '00000007' + '0000000b' + '78');
  });
});

describe('ConnectionError', () => {
  it('carries the GOAWAY code with its message', () => {
    const err = new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'DATA on stream 0');
    expect(err).toBeInstanceOf(Error);
    expect([err.code, err.message]).toEqual([1, 'DATA on stream 0']);
  });
});
