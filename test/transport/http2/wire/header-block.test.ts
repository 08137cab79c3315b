/**
 * A header block put together from HEADERS and CONTINUATION frames (RFC 9113 §4.3, §6.10)
 * under the CONTINUATION flood guards: too many bytes or frames end the connection with
 * ENHANCE_YOUR_CALM, a CONTINUATION out of place with PROTOCOL_ERROR.
 */
import { describe, expect, it } from 'vitest';
import { ConnectionError, H2_ERROR, MIN_MAX_FRAME_SIZE } from '../../../../src/transport/http2/wire/frames.js';
import { HeaderBlockAssembler } from '../../../../src/transport/http2/wire/header-block.js';
import { MAX_CONTINUATION_FRAMES } from '../../../../src/transport/http2/wire/limits.js';

function refusal(action: () => unknown): ConnectionError {
  try {
    action();
  } catch (err) {
    if (err instanceof ConnectionError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('HeaderBlockAssembler', () => {
  it('joins the fragments of HEADERS and CONTINUATION frames into one block, copied from the read buffer', () => {
    const block = new HeaderBlockAssembler(8192);
    const read = Buffer.from('abc');
    block.start(3, 0x1, read, true);
    read.fill(0);
    expect(block.open).toBe(true);
    expect([block.streamId, block.flags, block.selfDependent]).toEqual([3, 0x1, true]);
    expect(block.continue(3, Buffer.from('de'), false)).toBeUndefined();
    expect(block.continue(3, Buffer.alloc(0), false)).toBeUndefined();
    expect(block.continue(3, Buffer.from('f'), true)?.toString()).toBe('abcdef');
    expect(block.open).toBe(false);
  });

  it('is reused for the next block, holding nothing of the last', () => {
    const block = new HeaderBlockAssembler(8192);
    block.start(1, 0, Buffer.from('one'), false);
    block.continue(1, Buffer.from('!'), true);
    block.start(5, 0, Buffer.from('two'), false);
    expect(block.continue(5, Buffer.from('?'), true)?.toString()).toBe('two?');
  });

  it('refuses a CONTINUATION with no block open, or on another stream, with PROTOCOL_ERROR', () => {
    const block = new HeaderBlockAssembler(8192);
    let err = refusal(() => block.continue(1, Buffer.from('x'), true));
    expect([err.code, err.message]).toEqual([H2_ERROR.PROTOCOL_ERROR, 'CONTINUATION without a header block']);
    block.start(1, 0, Buffer.from('x'), false);
    err = refusal(() => block.continue(3, Buffer.from('x'), true));
    expect([err.code, err.message]).toEqual([H2_ERROR.PROTOCOL_ERROR, 'CONTINUATION without a header block']);
  });

  it('refuses a block larger than twice the header list bound plus a frame with ENHANCE_YOUR_CALM', () => {
    const maxList = 100;
    const max = 2 * maxList + MIN_MAX_FRAME_SIZE;
    expect(() => new HeaderBlockAssembler(maxList).start(1, 0, Buffer.alloc(max), false)).not.toThrow();
    let err = refusal(() => new HeaderBlockAssembler(maxList).start(1, 0, Buffer.alloc(max + 1), false));
    expect([err.code, err.message]).toEqual([H2_ERROR.ENHANCE_YOUR_CALM, 'header block too large']);
    const block = new HeaderBlockAssembler(maxList);
    block.start(1, 0, Buffer.alloc(max), false);
    err = refusal(() => block.continue(1, Buffer.alloc(1), false));
    expect([err.code, err.message]).toEqual([H2_ERROR.ENHANCE_YOUR_CALM, 'header block too large']);
  });

  it('refuses a block in more frames than the flood guard allows, even of empty fragments', () => {
    const block = new HeaderBlockAssembler(100);
    block.start(1, 0, Buffer.alloc(0), false);
    for (let i = 0; i < MAX_CONTINUATION_FRAMES; i++) block.continue(1, Buffer.alloc(0), false);
    const err = refusal(() => block.continue(1, Buffer.alloc(0), false));
    expect([err.code, err.message]).toEqual([H2_ERROR.ENHANCE_YOUR_CALM, 'header block in too many frames']);
  });
});
