/**
 * The frame writer: what is pushed in one turn goes out in one write, header blocks larger
 * than a frame are split into CONTINUATION frames, a socket that cannot take more is paused
 * until it drains, and the answers a peer makes the server queue are counted. A fake socket
 * records what it is given; endSocket's cut-off runs on fake timers.
 */
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FLAG, FRAME, frameHeader } from '../../../../src/transport/http2/wire/frames.js';
import { FrameWriter, endSocket } from '../../../../src/transport/http2/wire/writer.js';

class FakeSocket extends EventEmitter {
  /** Copies of what was written, as it was when written. */
  writes: Buffer[] = [];
  /** What was written, as handed over: a real socket may hold it until the kernel takes it. */
  handed: Buffer[] = [];
  destroyed = false;
  writable = true;
  accepts = true;
  writableLength = 0;
  writableNeedDrain = false;
  bytesWritten = 0;
  paused = false;
  corked = 0;
  ended = false;
  write(buffer: Buffer): boolean {
    this.writes.push(Buffer.from(buffer));
    this.handed.push(buffer);
    return this.accepts;
  }
  cork(): void {
    this.corked++;
  }
  uncork(): void {}
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

function writer(maxAnswers = 10): { fake: FakeSocket; out: FrameWriter } {
  const fake = new FakeSocket();
  return { fake, out: new FrameWriter(fake as unknown as Socket, maxAnswers) };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.useRealTimers();
});

describe('FrameWriter', () => {
  it('writes what was pushed in one turn as one buffer on the next', async () => {
    const { fake, out } = writer();
    out.push(Buffer.from('ab'));
    out.push(Buffer.from('cd'));
    expect(fake.writes).toHaveLength(0);
    await turn();
    expect(fake.writes.map(String)).toEqual(['abcd']);
  });

  it('holds a batch until endBatch, then writes it at once', async () => {
    const { fake, out } = writer();
    out.beginBatch();
    out.push(Buffer.from('a'));
    await turn();
    expect(fake.writes).toHaveLength(0);
    out.endBatch();
    expect(fake.writes.map(String)).toEqual(['a']);
  });

  it('writes more than 64 KiB corked, buffer by buffer', () => {
    const { fake, out } = writer();
    out.beginBatch();
    out.push(Buffer.alloc(40 << 10));
    out.push(Buffer.alloc(40 << 10));
    out.endBatch();
    expect(fake.corked).toBe(1);
    expect(fake.writes.map((b) => b.length)).toEqual([40 << 10, 40 << 10]);
  });

  it('sends a header block within a frame as one HEADERS frame', () => {
    const { fake, out } = writer();
    out.beginBatch();
    out.pushHeaderBlock(3, Buffer.from('block'), true, 16_384);
    out.endBatch();
    const [bytes] = fake.writes as [Buffer];
    expect(bytes.subarray(0, 9).toString('hex')).toBe('000005' + '01' + '05' + '00000003');
    expect(bytes.subarray(9).toString()).toBe('block');
  });

  it('splits a larger block into HEADERS and CONTINUATION frames, END_STREAM on the first, END_HEADERS on the last', () => {
    const { fake, out } = writer();
    out.beginBatch();
    out.pushHeaderBlock(5, Buffer.from('abcdefg'), true, 3);
    out.endBatch();
    const bytes = fake.writes[0] as Buffer;
    const frames: [number, number, number, string][] = [];
    for (let at = 0; at < bytes.length; ) {
      const length = bytes.readUIntBE(at, 3);
      frames.push([
        bytes[at + 3] as number,
        bytes[at + 4] as number,
        bytes.readUInt32BE(at + 5),
        bytes.subarray(at + 9, at + 9 + length).toString(),
      ]);
      at += 9 + length;
    }
    expect(frames).toEqual([
      [FRAME.HEADERS, FLAG.END_STREAM, 5, 'abc'],
      [FRAME.CONTINUATION, 0, 5, 'def'],
      [FRAME.CONTINUATION, FLAG.END_HEADERS, 5, 'g'],
    ]);
  });

  it('writes frame headers in place: the same bytes as frameHeader, frames and payloads in order, one write', () => {
    const { fake, out } = writer();
    out.beginBatch();
    out.pushFrameHeader(3, FRAME.DATA, 0, 1);
    out.push(Buffer.from('abc'));
    out.pushFrameHeader(0x123456, FRAME.HEADERS, FLAG.END_HEADERS, 0x7fffffff);
    out.push(Buffer.from('x'));
    out.endBatch();
    expect(fake.writes).toHaveLength(1);
    expect(fake.writes[0]?.toString('hex')).toBe(
      Buffer.concat([
        frameHeader(3, FRAME.DATA, 0, 1),
        Buffer.from('abc'),
        frameHeader(0x123456, FRAME.HEADERS, FLAG.END_HEADERS, 0x7fffffff),
        Buffer.from('x'),
      ]).toString('hex'),
    );
  });

  it('never writes again over what the socket was handed: later frames leave earlier writes as they were', async () => {
    const { fake, out } = writer();
    const expected: string[] = [];
    for (let write = 0; write < 50; write++) {
      let bytes = '';
      out.beginBatch();
      for (let call = 0; call <= write % 7; call++) {
        const payload = Buffer.alloc(1 + ((write * 31 + call * 17) % 900), write + call);
        out.pushFrameHeader(payload.length, FRAME.DATA, 0, 2 * call + 1);
        out.push(payload);
        bytes += frameHeader(payload.length, FRAME.DATA, 0, 2 * call + 1).toString('hex') + payload.toString('hex');
      }
      out.endBatch();
      expected.push(bytes);
      await turn();
    }
    // What each write handed over still holds its bytes, after every later one.
    expect(fake.handed.map((b) => b.toString('hex'))).toEqual(expected);
    expect(fake.writes.map((b) => b.toString('hex'))).toEqual(expected);
  });

  it('keeps the order of a batch larger than an arena, with payloads too large to copy queued as they are', () => {
    const { fake, out } = writer();
    const parts: Buffer[] = [];
    out.beginBatch();
    for (let i = 0; i < 120; i++) {
      // Mostly small payloads (copied), every 25th one of 5 KiB (queued by reference).
      const payload = Buffer.alloc(i % 25 === 24 ? 5 << 10 : 300 + i, i);
      out.pushFrameHeader(payload.length, FRAME.DATA, 0, 1);
      out.push(payload);
      parts.push(frameHeader(payload.length, FRAME.DATA, 0, 1), payload);
    }
    out.endBatch();
    expect(Buffer.concat(fake.writes).equals(Buffer.concat(parts))).toBe(true);
  });

  it('pauses the socket when it cannot take more, and resumes it once drained', () => {
    const { fake, out } = writer();
    fake.accepts = false;
    out.beginBatch();
    out.push(Buffer.from('x'));
    out.endBatch();
    expect(out.congested).toBe(true);
    expect(fake.paused).toBe(true);
    out.drained();
    expect(out.congested).toBe(false);
    expect(fake.paused).toBe(false);
  });

  it('counts queued answers past the bound until the socket has written them out', () => {
    const { fake, out } = writer(2);
    fake.writableLength = 100;
    out.beginBatch();
    out.pushAnswer(Buffer.from('1'));
    out.pushAnswer(Buffer.from('2'));
    expect(out.overAnswered).toBe(false);
    out.pushAnswer(Buffer.from('3'));
    expect(out.overAnswered).toBe(true);
    out.endBatch();
    // Still queued in the socket: the count stands.
    expect(out.overAnswered).toBe(true);
    fake.writableLength = 0;
    out.push(Buffer.from('4'));
    out.flush();
    expect(out.overAnswered).toBe(false);
  });

  it('drops what is queued when the socket is gone, and on discard', async () => {
    const { fake, out } = writer();
    out.push(Buffer.from('x'));
    fake.destroyed = true;
    await turn();
    fake.destroyed = false;
    out.flush();
    expect(fake.writes).toHaveLength(0);
    out.beginBatch();
    out.push(Buffer.from('y'));
    out.discard();
    out.endBatch();
    expect(fake.writes).toHaveLength(0);
    // What is pushed after a discard goes out alone.
    out.beginBatch();
    out.pushFrameHeader(1, FRAME.DATA, 0, 1);
    out.push(Buffer.from('z'));
    out.endBatch();
    expect(fake.writes.map((b) => b.toString('hex'))).toEqual([frameHeader(1, FRAME.DATA, 0, 1).toString('hex') + '7a']);
  });
});

describe('endSocket', () => {
  it('ends the socket, waits while bytes still leave, and destroys it once they stop', () => {
    vi.useFakeTimers();
    const fake = new FakeSocket();
    fake.writableLength = 10;
    endSocket(fake as unknown as Socket, 1000);
    expect(fake.ended).toBe(true);
    fake.bytesWritten = 5;
    vi.advanceTimersByTime(1000);
    expect(fake.destroyed).toBe(false);
    // Nothing more written in the next period: cut off.
    vi.advanceTimersByTime(1000);
    expect(fake.destroyed).toBe(true);
  });

  it('drops its timer once the socket closes, so that a closed connection is not kept reachable by it', () => {
    vi.useFakeTimers();
    const fake = new FakeSocket();
    fake.writableLength = 10;
    endSocket(fake as unknown as Socket, 1000);
    expect(vi.getTimerCount()).toBe(1);
    fake.emit('close');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('destroys at once at the first check when nothing is left to write', () => {
    vi.useFakeTimers();
    const fake = new FakeSocket();
    endSocket(fake as unknown as Socket, 500);
    vi.advanceTimersByTime(499);
    expect(fake.destroyed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(fake.destroyed).toBe(true);
  });
});
