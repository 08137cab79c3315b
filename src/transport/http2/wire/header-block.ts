/**
 * A header block arriving in HEADERS and CONTINUATION frames (RFC 9113 (https://www.rfc-editor.org/rfc/rfc9113) §4.3, §6.10), put
 * together under the CONTINUATION flood guards: a block no decoder would accept, in bytes
 * or in frames, ends the connection before it is all buffered. One per connection, reused.
 */
import { Buffer } from 'node:buffer';
import { ConnectionError, H2_ERROR, MIN_MAX_FRAME_SIZE } from './frames.js';
import { MAX_CONTINUATION_FRAMES } from './limits.js';

export class HeaderBlockAssembler {
  /** The largest block taken: HPACK seldom makes a header list larger than twice its encoding. */
  readonly #maxBytes: number;
  /** The most frames one block may take (the flood guard counts frames, not only bytes). */
  readonly #maxFrames: number;
  readonly #fragments: Buffer[] = [];
  #size = 0;
  #frames = 0;
  /** A block is under way: only its CONTINUATION frames may come (§6.10). */
  open = false;
  streamId = 0;
  /** The flags of its HEADERS frame. */
  flags = 0;
  selfDependent = false;

  constructor(maxHeaderListBytes: number) {
    this.#maxBytes = 2 * maxHeaderListBytes + MIN_MAX_FRAME_SIZE;
    this.#maxFrames = Math.max(1 + MAX_CONTINUATION_FRAMES, 2 * Math.ceil(this.#maxBytes / MIN_MAX_FRAME_SIZE));
  }

  /** A HEADERS frame without END_HEADERS; `fragment` is a view of the read buffer, copied. */
  start(streamId: number, flags: number, fragment: Buffer, selfDependent: boolean): void {
    this.#checkSize(fragment.length);
    this.open = true;
    this.streamId = streamId;
    this.flags = flags;
    this.selfDependent = selfDependent;
    this.#fragments.push(Buffer.from(fragment));
    this.#size = fragment.length;
    this.#frames = 1;
  }

  /** A CONTINUATION frame: the whole block once `endHeaders`, else undefined. */
  continue(streamId: number, fragment: Buffer, endHeaders: boolean): Buffer | undefined {
    if (!this.open || this.streamId !== streamId) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'CONTINUATION without a header block');
    this.#size += fragment.length;
    this.#checkSize(this.#size);
    if (++this.#frames > this.#maxFrames) throw new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, 'header block in too many frames');
    if (fragment.length > 0) this.#fragments.push(Buffer.from(fragment));
    if (!endHeaders) return undefined;
    const block = Buffer.concat(this.#fragments, this.#size);
    this.open = false;
    this.#fragments.length = 0;
    return block;
  }

  #checkSize(size: number): void {
    if (size > this.#maxBytes) throw new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, 'header block too large');
  }
}
