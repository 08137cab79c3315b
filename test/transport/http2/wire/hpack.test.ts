/**
 * The transport's HPACK against RFC 7541's own examples (Appendix C), the malformed
 * blocks a decoder must refuse, and the encoder read back by the decoder. The whole
 * HTTP/2 layer is tested over real connections (protocol, h2spec and interop tests).
 */
import { describe, expect, it } from 'vitest';
import { HpackDecoder, HpackError, encodeHeaderBlock } from '../../../../src/transport/http2/wire/hpack.js';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

function decode(decoder: HpackDecoder, block: Buffer, maxListSize = 1 << 16): Record<string, string> {
  const fields: string[] = [];
  decoder.decode(block, 0, block.length, fields, maxListSize);
  const headers: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) headers[fields[i] as string] = fields[i + 1] as string;
  return headers;
}

describe('HPACK decoding (RFC 7541, Appendix C)', () => {
  it('C.4: three requests with Huffman-coded literals share one dynamic table', () => {
    const decoder = new HpackDecoder(4096);
    expect(decode(decoder, hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff'))).toEqual({
      ':method': 'GET',
      ':scheme': 'http',
      ':path': '/',
      ':authority': 'www.example.com',
    });
    // 0xbe is dynamic index 62: the :authority the first block added.
    expect(decode(decoder, hex('8286 84be 5886 a8eb 1064 9cbf'))).toEqual({
      ':method': 'GET',
      ':scheme': 'http',
      ':path': '/',
      ':authority': 'www.example.com',
      'cache-control': 'no-cache',
    });
    expect(decode(decoder, hex('8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf'))).toEqual({
      ':method': 'GET',
      ':scheme': 'https',
      ':path': '/index.html',
      ':authority': 'www.example.com',
      'custom-key': 'custom-value',
    });
  });

  it('C.6: responses in a 256-octet table evict the oldest entries', () => {
    const decoder = new HpackDecoder(256);
    const first = hex(`4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
      2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3`);
    expect(decode(decoder, first)).toEqual({
      ':status': '302',
      'cache-control': 'private',
      date: 'Mon, 21 Oct 2013 20:13:21 GMT',
      location: 'https://www.example.com',
    });
    expect(decode(decoder, hex('4883 640e ffc1 c0bf'))).toEqual({
      ':status': '307',
      'cache-control': 'private',
      date: 'Mon, 21 Oct 2013 20:13:21 GMT',
      location: 'https://www.example.com',
    });
    const third = hex(`88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
      77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
      9587 3160 65c0 03ed 4ee5 b106 3d50 07`);
    expect(decode(decoder, third)).toEqual({
      ':status': '200',
      'cache-control': 'private',
      date: 'Mon, 21 Oct 2013 20:13:22 GMT',
      location: 'https://www.example.com',
      'content-encoding': 'gzip',
      'set-cookie': 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1',
    });
    // The third block evicted all but its own three entries (indices 62-64): 65, which
    // the same block used for "cache-control: private" before adding its own, is gone.
    expect(decode(decoder, hex('be'))).toEqual({ 'set-cookie': 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1' });
    expect(() => decode(decoder, hex('c1'))).toThrow(/index 65/);
  });

  it('refuses malformed blocks with HpackError', () => {
    const bad = {
      'index 0': '80',
      'an index past both tables': 'ff 00',
      'a string longer than its block': '00 05 61',
      'a truncated integer': 'ff ff',
      'a size update above the advertised size': '3f e2 1f',
      'a size update after a field': '82 20',
    };
    for (const [what, block] of Object.entries(bad)) {
      expect(() => decode(new HpackDecoder(4096), hex(block)), what).toThrow(HpackError);
    }
  });

  it('reports the header list size, keeps no field past the bound, and still indexes it', () => {
    // A literal "custom-key: custom-value" with indexing is 10 + 12 + 32 = 54 octets of list size.
    const block = hex('400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65');
    const fields: string[] = [];
    expect(new HpackDecoder().decode(block, 0, block.length, fields, 54)).toBe(54);
    expect(fields).toEqual(['custom-key', 'custom-value']);
    const decoder = new HpackDecoder();
    const dropped: string[] = [];
    expect(decoder.decode(block, 0, block.length, dropped, 53)).toBe(54);
    expect(dropped).toEqual([]);
    // The dynamic table took the field all the same, so the next block's index 62 resolves.
    expect(decode(decoder, hex('be'))).toEqual({ 'custom-key': 'custom-value' });
  });
});

describe('HPACK decoding: well-formed characters (RFC 9113 §8.2.1)', () => {
  const literal = (first: number, name: string, value: string): Buffer =>
    Buffer.concat([Buffer.from([first, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
  const wellFormed = (decoder: HpackDecoder, block: Buffer): boolean => {
    decoder.decode(block, 0, block.length, [], 1 << 16);
    return decoder.wellFormed;
  };

  it('tells a block of well-formed fields from one with a bad name or value, for each literal form', () => {
    const decoder = new HpackDecoder();
    expect(wellFormed(decoder, Buffer.concat([hex('8286'), literal(0x00, 'x-ok', 'a b')]))).toBe(true);
    for (const first of [0x00, 0x10, 0x40]) {
      expect(wellFormed(decoder, literal(first, 'X-Upper', 'a')), `0x${first.toString(16)} name`).toBe(false);
      expect(wellFormed(decoder, literal(first, 'x-nul', 'a\u0000b')), `0x${first.toString(16)} value`).toBe(false);
      expect(wellFormed(decoder, literal(first, 'x-space', ' a')), `0x${first.toString(16)} leading space`).toBe(false);
    }
  });

  it('remembers the verdict with a dynamic-table entry, so an indexed reference to a bad field is not well-formed either', () => {
    const decoder = new HpackDecoder();
    // Two entries: 'x-good: 1' (then index 63) and 'x-bad: a\rb' (index 62, the newest).
    expect(wellFormed(decoder, Buffer.concat([literal(0x40, 'x-good', '1'), literal(0x40, 'x-bad', 'a\rb')]))).toBe(false);
    expect(wellFormed(decoder, Buffer.from([0x80 | 63]))).toBe(true);
    expect(wellFormed(decoder, Buffer.from([0x80 | 62]))).toBe(false);
    expect(wellFormed(decoder, Buffer.from([0x82, 0x80 | 63]))).toBe(true);
    // A literal value under the bad entry's name (index 62): the name alone is fine.
    expect(wellFormed(decoder, Buffer.concat([Buffer.from([0x0f, 62 - 15, 1]), Buffer.from('z')]))).toBe(true);
  });
});

describe('HPACK encoding', () => {
  it('encodes what the decoder reads back: pseudo-headers first, repeated names, static indices', () => {
    const block = encodeHeaderBlock({ 'content-type': 'application/grpc', ':status': 200, 'x-many': ['a', 'b'], 'grpc-status': 0 });
    const fields: string[] = [];
    new HpackDecoder().decode(block, 0, block.length, fields, 1 << 16);
    expect(fields).toEqual([':status', '200', 'content-type', 'application/grpc', 'x-many', 'a', 'x-many', 'b', 'grpc-status', '0']);
    // ":status: 200" is static index 8, one octet.
    expect(block[0]).toBe(0x88);
  });

  it('encodes a long value with a multi-octet length, and refuses names and values HTTP/2 forbids', () => {
    const long = 'v'.repeat(300);
    const block = encodeHeaderBlock({ 'x-long': long });
    const fields: string[] = [];
    new HpackDecoder().decode(block, 0, block.length, fields, 1 << 16);
    expect(fields).toEqual(['x-long', long]);
    expect(() => encodeHeaderBlock({ 'X-Upper': 'a' })).toThrow(/header name/);
    expect(() => encodeHeaderBlock({ 'x-crlf': 'a\r\nb' })).toThrow(/value for HTTP\/2 header x-crlf/);
  });

  it('encodes a frozen header set once', () => {
    const headers = Object.freeze({ ':status': 200 });
    expect(encodeHeaderBlock(headers)).toBe(encodeHeaderBlock(headers));
  });
});
