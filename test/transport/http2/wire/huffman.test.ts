/**
 * HPACK's Huffman decoder (RFC 7541 Appendix B, §5.2): the strings of the RFC's own examples,
 * a slice of a larger buffer, and the padding and EOS refusals §5.2 requires.
 */
import { describe, expect, it } from 'vitest';
import { huffmanDecode } from '../../../../src/transport/http2/wire/huffman.js';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

describe('huffmanDecode', () => {
  it('decodes the Huffman strings of RFC 7541 (C.4, C.6)', () => {
    const date = hex('d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff');
    expect(huffmanDecode(date, 0, date.length)).toBe('Mon, 21 Oct 2013 20:13:21 GMT');
    const host = hex('f1e3 c2e5 f23a 6ba0 ab90 f4ff');
    expect(huffmanDecode(host, 0, host.length)).toBe('www.example.com');
    const noCache = hex('a8eb 1064 9cbf');
    expect(huffmanDecode(noCache, 0, noCache.length)).toBe('no-cache');
  });

  it('decodes only bytes [start, end) of a larger buffer, and an empty range as ""', () => {
    const framed = Buffer.concat([hex('00 00'), hex('a8eb 1064 9cbf'), hex('00')]);
    expect(huffmanDecode(framed, 2, 8)).toBe('no-cache');
    expect(huffmanDecode(framed, 3, 3)).toBe('');
  });

  it('refuses padding that is not a prefix of EOS (all ones)', () => {
    // 0x00 is '0' (5 bits 00000) then 3 zero bits of padding.
    expect(() => huffmanDecode(hex('00'), 0, 1)).toThrow('Huffman string has invalid padding');
  });

  it('refuses padding longer than 7 bits', () => {
    // 'a' (00011) then 11 one-bits: all ones, but a whole octet and more of padding.
    expect(() => huffmanDecode(hex('1f ff'), 0, 2)).toThrow('Huffman string has invalid padding');
  });

  it('refuses the EOS symbol inside a string', () => {
    // 30 one-bits are EOS itself.
    expect(() => huffmanDecode(hex('ffff ffff'), 0, 4)).toThrow('Huffman string contains EOS');
  });
});
