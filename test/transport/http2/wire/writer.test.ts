/**
 * The frame writer: what is pushed in one turn goes out in one write, header blocks larger
 * than a frame are split into CONTINUATION frames, a socket that cannot take more is paused
 * until it drains, and the answers a peer makes the server queue are counted. A fake socket
 * records what it is given; endSocket's cut-off runs on fake timers.
 */
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FLAG, FRAME } from '../../../../src/transport/http2/wire/frames.js';
import { FrameWriter, endSocket } from '../../../../src/transport/http2/wire/writer.js';

class FakeSocket {
  writes: Buffer[] = [];
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
