/**
 * A connection's outgoing frames: queued, then written together, so that the answers to
 * everything one read brought go out in one write (one syscall for many calls).
 */
import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import { FLAG, FRAME, frameHeader } from './frames.js';

/** Output below this size is copied into one buffer per write; larger goes out as a writev. */
const COALESCE_BYTES = 64 << 10;

export class FrameWriter {
  readonly #socket: Socket;
  readonly #out: Buffer[] = [];
  #outBytes = 0;
  #flushScheduled = false;
  /** A read is being handled: frames wait for its end. */
  #batching = false;
  #congested = false;
  /** Acks the peer asked for, queued since the socket last had nothing waiting to go out. */
  #answers = 0;
  readonly #maxAnswers: number;

  /** `maxAnswers`: acks that may wait for a peer that does not read (see `overAnswered`). */
  constructor(socket: Socket, maxAnswers: number) {
    this.#socket = socket;
    this.#maxAnswers = maxAnswers;
  }

  /** The socket's buffer is over its high-water mark: writers, and reading, wait for `drained`. */
  get congested(): boolean {
    return this.#congested;
  }

  /** Queues `buffer`; it is written at the end of the current read, or on the next turn of the event loop. */
  push(buffer: Buffer): void {
    this.#out.push(buffer);
    this.#outBytes += buffer.length;
    if (this.#batching || this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** Queues an ack the peer asked for (PING, SETTINGS), counted against `maxAnswers`. */
  pushAnswer(buffer: Buffer): void {
    this.#answers++;
    this.push(buffer);
  }

  /**
   * More acks wait than `maxAnswers`: a peer that asks and does not read (CVE-2019-9512,
   * -9515). The count restarts whenever the socket has taken everything queued.
   */
  get overAnswered(): boolean {
    return this.#answers > this.#maxAnswers;
  }

  /** A header block as HEADERS (+ CONTINUATION) frames no larger than `maxFrameSize` (the peer's SETTINGS_MAX_FRAME_SIZE). */
  pushHeaderBlock(streamId: number, block: Buffer, endStream: boolean, maxFrameSize: number): void {
    const endFlag = endStream ? FLAG.END_STREAM : 0;
    if (block.length <= maxFrameSize) {
      this.push(frameHeader(block.length, FRAME.HEADERS, FLAG.END_HEADERS | endFlag, streamId));
      this.push(block);
      return;
    }
    for (let offset = 0; offset < block.length; offset += maxFrameSize) {
      const fragment = block.subarray(offset, offset + maxFrameSize);
      const last = offset + maxFrameSize >= block.length;
      const type = offset === 0 ? FRAME.HEADERS : FRAME.CONTINUATION;
      this.push(frameHeader(fragment.length, type, (last ? FLAG.END_HEADERS : 0) | (offset === 0 ? endFlag : 0), streamId));
      this.push(fragment);
    }
  }

  /** Holds writes until `endBatch`. */
  beginBatch(): void {
    this.#batching = true;
  }

  endBatch(): void {
    this.#batching = false;
    this.flush();
  }

  /** Writes everything queued in one write; drops it when the socket can no longer write. */
  flush(): void {
    this.#flushScheduled = false;
    const out = this.#out;
    if (out.length === 0) return;
    const socket = this.#socket;
    if (socket.destroyed || !socket.writable) {
      this.discard();
      return;
    }
    let ok: boolean;
    if (out.length === 1) ok = socket.write(out[0] as Buffer);
    else if (this.#outBytes <= COALESCE_BYTES) ok = socket.write(Buffer.concat(out, this.#outBytes));
    else {
      socket.cork();
      for (const buffer of out) socket.write(buffer);
      socket.uncork();
      ok = !socket.writableNeedDrain;
    }
    out.length = 0;
    this.#outBytes = 0;
    if (socket.writableLength === 0) this.#answers = 0;
    if (ok) return;
    // A peer that reads nothing gets nothing more read from it either, so what it makes
    // the server answer (PING acks, resets, responses) cannot pile up here, until
    // `drained`.
    this.#congested = true;
    socket.pause();
  }

  /** The socket's 'drain': writes and reading go on. */
  drained(): void {
    this.#congested = false;
    this.#answers = 0;
    this.#socket.resume();
  }

  discard(): void {
    this.#out.length = 0;
    this.#outBytes = 0;
  }
}

/**
 * Ends `socket` after what is queued on it: a peer that does not close its side is cut
 * off once our side has flushed, or has made no progress for `flushMs` (a peer that reads
 * nothing).
 */
export function endSocket(socket: Socket, flushMs: number): void {
  socket.end();
  let written = -1;
  const cutOff = (): void => {
    if (socket.destroyed) return;
    if (socket.writableLength > 0 && socket.bytesWritten > written) {
      written = socket.bytesWritten;
      setTimeout(cutOff, flushMs).unref();
      return;
    }
    socket.destroy();
  };
  setTimeout(cutOff, flushMs).unref();
}
