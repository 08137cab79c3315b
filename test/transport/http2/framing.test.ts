/**
 * gRPC's length-prefixed messages: a reader that finds messages however the DATA frames cut
 * them, refusing a bad compressed flag and a message over the limit before buffering it.
 */
import { describe, expect, it } from 'vitest';
import { GrpcStatus, GrpcStatusError } from '../../../src/contracts/handler-api.js';
import { MessageReader, framedMessage, messagePrefix } from '../../../src/transport/http2/framing.js';

function collect(reader: MessageReader, chunks: readonly Buffer[]): [boolean, string][] {
  const seen: [boolean, string][] = [];
  for (const chunk of chunks) reader.push(chunk, { onMessage: (compressed, bytes) => seen.push([compressed, bytes.toString()]) });
  return seen;
}

function refusal(action: () => unknown): GrpcStatusError {
  try {
    action();
  } catch (err) {
    if (err instanceof GrpcStatusError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('messagePrefix and framedMessage', () => {
  it('write the flag and the 32-bit length before the message', () => {
    expect(messagePrefix(true, 0x01020304).toString('hex')).toBe('0101020304');
    expect(framedMessage(false, Buffer.from('hi')).toString('hex')).toBe('0000000002' + '6869');
  });
});

describe('MessageReader', () => {
  it('reads several messages in one chunk, the compressed flag with each, and an empty one', () => {
    const chunk = Buffer.concat([
      framedMessage(false, Buffer.from('one')),
      framedMessage(true, Buffer.from('two')),
      framedMessage(false, Buffer.alloc(0)),
    ]);
    expect(collect(new MessageReader(100), [chunk])).toEqual([
      [false, 'one'],
      [true, 'two'],
      [false, ''],
    ]);
  });

  it('reads a message cut at every byte, prefix included, and says partial until it is whole', () => {
    const bytes = Buffer.concat([framedMessage(true, Buffer.from('hello')), framedMessage(false, Buffer.from('x'))]);
    const reader = new MessageReader(100);
    const seen: [boolean, string][] = [];
    const partial: boolean[] = [];
    for (let i = 0; i < bytes.length; i++) {
      reader.push(bytes.subarray(i, i + 1), { onMessage: (compressed, body) => seen.push([compressed, body.toString()]) });
      partial.push(reader.partial);
    }
    expect(seen).toEqual([
      [true, 'hello'],
      [false, 'x'],
    ]);
    expect(partial[0]).toBe(true);
    expect(partial[9]).toBe(false);
    expect(partial.at(-1)).toBe(false);
  });

  it('takes a message of exactly the limit', () => {
    expect(collect(new MessageReader(3), [framedMessage(false, Buffer.from('abc'))])).toEqual([[false, 'abc']]);
  });

  it('refuses a message over the limit from its prefix alone with RESOURCE_EXHAUSTED', () => {
    const err = refusal(() => collect(new MessageReader(3), [messagePrefix(false, 4)]));
    expect(err.status).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(err.message).toBe('request message of 4 bytes exceeds the limit of 3 bytes (maxReceiveMessageBytes)');
  });

  it('refuses a compressed flag other than 0 or 1 with INTERNAL, also when the prefix is cut', () => {
    const bad = Buffer.from([2, 0, 0, 0, 0]);
    let err = refusal(() => collect(new MessageReader(3), [bad]));
    expect([err.status, err.message]).toEqual([GrpcStatus.INTERNAL, 'invalid compressed flag 2 in a request message prefix']);
    err = refusal(() => collect(new MessageReader(3), [bad.subarray(0, 2), bad.subarray(2)]));
    expect(err.status).toBe(GrpcStatus.INTERNAL);
  });
});
