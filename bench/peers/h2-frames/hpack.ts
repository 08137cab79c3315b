/**
 * HPACK header block decoding (RFC 7541): the static and dynamic tables, integers,
 * strings and the four field representations. Only decoding: the probe's responses are
 * constant blocks of literals (see frames.ts).
 */
import { huffmanDecode } from './huffman.js';

/** RFC 7541, Appendix A: index i + 1 is STATIC_TABLE[i]. */
// prettier-ignore
const STATIC_TABLE: readonly (readonly [string, string])[] = [
  [':authority', ''], [':method', 'GET'], [':method', 'POST'], [':path', '/'], [':path', '/index.html'],
  [':scheme', 'http'], [':scheme', 'https'], [':status', '200'], [':status', '204'], [':status', '206'],
  [':status', '304'], [':status', '400'], [':status', '404'], [':status', '500'], ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'], ['accept-language', ''], ['accept-ranges', ''], ['accept', ''],
  ['access-control-allow-origin', ''], ['age', ''], ['allow', ''], ['authorization', ''], ['cache-control', ''],
  ['content-disposition', ''], ['content-encoding', ''], ['content-language', ''], ['content-length', ''],
  ['content-location', ''], ['content-range', ''], ['content-type', ''], ['cookie', ''], ['date', ''], ['etag', ''],
  ['expect', ''], ['expires', ''], ['from', ''], ['host', ''], ['if-match', ''], ['if-modified-since', ''],
  ['if-none-match', ''], ['if-range', ''], ['if-unmodified-since', ''], ['last-modified', ''], ['link', ''],
  ['location', ''], ['max-forwards', ''], ['proxy-authenticate', ''], ['proxy-authorization', ''], ['range', ''],
  ['referer', ''], ['refresh', ''], ['retry-after', ''], ['server', ''], ['set-cookie', ''],
  ['strict-transport-security', ''], ['transfer-encoding', ''], ['user-agent', ''], ['vary', ''], ['via', ''],
  ['www-authenticate', ''],
];

/** The static table as entries, so an indexed field allocates nothing. */
const STATIC_ENTRIES: readonly { readonly name: string; readonly value: string }[] = STATIC_TABLE.map(([name, value]) => ({ name, value }));

/** A header block the decoder cannot take: the connection must end with COMPRESSION_ERROR (RFC 9113 §4.3). */
export class HpackError extends Error {}

interface DynamicEntry {
  readonly name: string;
  readonly value: string;
  /** RFC 7541 §4.1: name and value octets plus 32. */
  readonly size: number;
}

/** One connection's decoding context: the dynamic table lives as long as the connection. */
export class HpackDecoder {
  /** Newest first: dynamic index 62 is #dynamic[0]. */
  readonly #dynamic: DynamicEntry[] = [];
  #size = 0;
  #maxSize: number;
  /** SETTINGS_HEADER_TABLE_SIZE as this side advertised it: the most a size update may ask for. */
  readonly #limit: number;
  #block: Uint8Array = new Uint8Array(0);
  #pos = 0;
  #end = 0;

  constructor(tableSizeLimit = 4096) {
    this.#limit = tableSizeLimit;
    this.#maxSize = tableSizeLimit;
  }

  /**
   * Decodes `block[start, end)` into `headers` (a repeated name keeps its values joined
   * with ", ", as node:http2 does). Stops with HpackError once the decoded list exceeds
   * `maxListSize` octets (RFC 9113 §6.5.2's accounting).
   */
  decode(block: Uint8Array, start: number, end: number, headers: Record<string, string>, maxListSize: number): void {
    this.#block = block;
    this.#pos = start;
    this.#end = end;
    let listSize = 0;
    let fieldSeen = false;
    while (this.#pos < end) {
      const first = block[this.#pos] as number;
      let name: string;
      let value: string;
      if (first & 0x80) {
        ({ name, value } = this.#entry(this.#integer(7)));
      } else if (first & 0x40) {
        const index = this.#integer(6);
        name = index === 0 ? this.#string() : this.#entry(index).name;
        value = this.#string();
        this.#add(name, value);
      } else if (first & 0x20) {
        // §4.2: a size update only at the start of a block.
        if (fieldSeen) throw new HpackError('dynamic table size update after a header field');
        const size = this.#integer(5);
        if (size > this.#limit) throw new HpackError(`dynamic table size update ${size} above the advertised ${this.#limit}`);
        this.#maxSize = size;
        this.#evict(0);
        continue;
      } else {
        // Literal without indexing (0000) or never indexed (0001): the same to a decoder.
        const index = this.#integer(4);
        name = index === 0 ? this.#string() : this.#entry(index).name;
        value = this.#string();
      }
      fieldSeen = true;
      listSize += name.length + value.length + 32;
      if (listSize > maxListSize) throw new HpackError(`header list larger than ${maxListSize} octets`);
      const earlier = headers[name];
      headers[name] = earlier === undefined ? value : `${earlier}, ${value}`;
    }
  }

  /** §5.1: an N-bit prefix integer; anything past 2^28 is refused rather than risk precision. */
  #integer(prefixBits: number): number {
    const max = (1 << prefixBits) - 1;
    let value = (this.#block[this.#pos++] as number) & max;
    if (value < max) return value;
    for (let shift = 0; ; shift += 7) {
      if (this.#pos >= this.#end) throw new HpackError('truncated integer');
      if (shift > 21) throw new HpackError('integer too large');
      const byte = this.#block[this.#pos++] as number;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
  }

  /** §5.2: a length-prefixed string literal, Huffman-coded when the H bit is set. */
  #string(): string {
    if (this.#pos >= this.#end) throw new HpackError('truncated string');
    const huffman = ((this.#block[this.#pos] as number) & 0x80) !== 0;
    const length = this.#integer(7);
    const start = this.#pos;
    if (start + length > this.#end) throw new HpackError('string longer than its block');
    this.#pos += length;
    if (!huffman) return Buffer.from(this.#block.buffer, this.#block.byteOffset + start, length).toString('latin1');
    try {
      return huffmanDecode(this.#block, start, start + length);
    } catch (err) {
      throw new HpackError((err as Error).message);
    }
  }

  #entry(index: number): { readonly name: string; readonly value: string } {
    const entry = index <= STATIC_ENTRIES.length ? STATIC_ENTRIES[index - 1] : this.#dynamic[index - STATIC_ENTRIES.length - 1];
    if (entry === undefined) throw new HpackError(`header index ${index} is not in the tables`);
    return entry;
  }

  /** §4.4: evict from the oldest end until the new entry fits; one larger than the table empties it. */
  #add(name: string, value: string): void {
    const size = name.length + value.length + 32;
    this.#evict(size);
    if (size > this.#maxSize) return;
    this.#dynamic.unshift({ name, value, size });
    this.#size += size;
  }

  #evict(room: number): void {
    while (this.#size + room > this.#maxSize && this.#dynamic.length > 0) {
      this.#size -= (this.#dynamic.pop() as DynamicEntry).size;
    }
  }
}
