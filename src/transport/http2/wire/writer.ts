/**
 * A connection's outgoing frames: queued, then written together, so that the answers to
 * everything one read brought go out in one write (one syscall for many calls).
 *
 * Frame headers and small payloads are written into an arena, one buffer per write sized from
 * the writes before: a unary call's three frames cost no buffer of their own, and a batch
 * that fits goes to the socket as the arena itself, with no copy to join it. The socket keeps
 * what it was handed, so each write's arena is left to it, and an idle connection holds none.
 * An arena is 1.25x the write before it (1-64 KiB): a socket that holds writes a slow peer
 * has not read holds that much more than their bytes, and it stops reading past its
 * high-water mark (`congested`) as before.
 */
import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import { FLAG, FRAME, FRAME_HEADER_BYTES } from './frames.js';

/** Output below this size is copied into one buffer per write; larger goes out as a writev. */
const COALESCE_BYTES = 64 << 10;

/**
 * An arena's size: the last write's bytes and a quarter, within these bounds (a unary answer
 * of this service is ~460 bytes of frames; 35 of them fill 16 KiB).
 */
const MIN_ARENA_BYTES = 1 << 10;
const MAX_ARENA_BYTES = COALESCE_BYTES;

/** Payloads up to this size are copied into the arena; larger ones are queued as they are (one copy fewer). */
const ARENA_COPY_MAX = 4 << 10;

export class FrameWriter {
  readonly #socket: Socket;
  /** Queued segments: views of arenas, and payloads too large to copy. */
  readonly #out: Buffer[] = [];
  #outBytes = 0;
  /** Where frames are written until the next write; [#arenaStart, #arenaUsed) is queued but not yet a segment of #out. */
  #arena: Buffer | undefined;
  #arenaStart = 0;
  #arenaUsed = 0;
  /** The size of the next arena. */
  #arenaBytes = MIN_ARENA_BYTES;
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
    const length = buffer.length;
    if (length <= ARENA_COPY_MAX) {
      buffer.copy(this.#room(length), this.#arenaUsed);
      this.#arenaUsed += length;
    } else {
      this.#seal();
      this.#out.push(buffer);
    }
    this.#queued(length);
  }

  /** Queues a frame header (RFC 9113 §4.1), written straight into the arena; its payload follows with `push`. */
  pushFrameHeader(length: number, type: number, flags: number, streamId: number): void {
    const arena = this.#room(FRAME_HEADER_BYTES);
    const at = this.#arenaUsed;
    arena[at] = length >>> 16;
    arena[at + 1] = (length >>> 8) & 0xff;
    arena[at + 2] = length & 0xff;
    arena[at + 3] = type;
    arena[at + 4] = flags;
    arena.writeUInt32BE(streamId, at + 5);
    this.#arenaUsed = at + FRAME_HEADER_BYTES;
    this.#queued(FRAME_HEADER_BYTES);
  }

  /** Counts `bytes` as queued, and makes sure a flush will come. */
  #queued(bytes: number): void {
    this.#outBytes += bytes;
    if (this.#batching || this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /**
   * The arena, with room for `bytes` more at #arenaUsed: a fresh one when there is none or it
   * is full (what is queued of the old one becomes a segment, and the next size doubles).
   */
  #room(bytes: number): Buffer {
    const arena = this.#arena;
    if (arena !== undefined && this.#arenaUsed + bytes <= arena.length) return arena;
    this.#seal();
    if (arena !== undefined) this.#arenaBytes = Math.min(MAX_ARENA_BYTES, 2 * this.#arenaBytes);
    // Not from node:buffer's pool, not zero-filled: every byte is written before it is queued.
    const fresh = Buffer.allocUnsafeSlow(Math.max(bytes, this.#arenaBytes));
    this.#arena = fresh;
    this.#arenaStart = 0;
    this.#arenaUsed = 0;
    return fresh;
  }

  /** Leaves the arena to the socket that was handed it; the next one is sized from what this write took. */
  #release(writtenBytes: number): void {
    this.#arena = undefined;
    this.#arenaStart = 0;
    this.#arenaUsed = 0;
    this.#arenaBytes = Math.min(MAX_ARENA_BYTES, Math.max(MIN_ARENA_BYTES, writtenBytes + (writtenBytes >> 2)));
  }

  /** Moves the arena's queued bytes into #out as one segment; the arena goes on after them. */
  #seal(): void {
    if (this.#arena === undefined || this.#arenaUsed === this.#arenaStart) return;
    this.#out.push(this.#arena.subarray(this.#arenaStart, this.#arenaUsed));
    this.#arenaStart = this.#arenaUsed;
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
      this.pushFrameHeader(block.length, FRAME.HEADERS, FLAG.END_HEADERS | endFlag, streamId);
      this.push(block);
      return;
    }
    for (let offset = 0; offset < block.length; offset += maxFrameSize) {
      const fragment = block.subarray(offset, offset + maxFrameSize);
      const last = offset + maxFrameSize >= block.length;
      const type = offset === 0 ? FRAME.HEADERS : FRAME.CONTINUATION;
      this.pushFrameHeader(fragment.length, type, (last ? FLAG.END_HEADERS : 0) | (offset === 0 ? endFlag : 0), streamId);
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
    this.#seal();
    const out = this.#out;
    if (out.length === 0) return;
    const socket = this.#socket;
    if (socket.destroyed || !socket.writable) {
      this.discard();
      return;
    }
    this.#release(this.#outBytes);
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
    // Never handed to the socket: the arena may write over it.
    this.#arenaUsed = this.#arenaStart;
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
  let timer: NodeJS.Timeout;
  const cutOff = (): void => {
    if (socket.destroyed) return;
    if (socket.writableLength > 0 && socket.bytesWritten > written) {
      written = socket.bytesWritten;
      timer = setTimeout(cutOff, flushMs).unref();
      return;
    }
    socket.destroy();
  };
  timer = setTimeout(cutOff, flushMs).unref();
  // A pending timer keeps the socket, and through its listeners the whole connection,
  // reachable: under connection churn (thousands closed a second) that was a second's worth
  // of connections surviving into the old generation, hundreds of MiB until a full GC.
  socket.once('close', () => clearTimeout(timer));
}
