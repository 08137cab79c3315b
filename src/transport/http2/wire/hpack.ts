/**
 * HPACK (RFC 7541 (https://www.rfc-editor.org/rfc/rfc7541)). Decoding: the static and dynamic tables, integers, strings (Huffman
 * too) and the four field representations. Encoding: literals without indexing, so the
 * encoder keeps no state and a constant header set encodes once (`encodeHeaderBlock`).
 */
import { Buffer } from 'node:buffer';
import { HpackError } from './frames.js';
import { huffmanDecode } from './huffman.js';
import { isFieldName, wellFormedField } from './request-fields.js';
import { internalError } from '../../../base/assert.js';

/** RFC 7541, Appendix A: index i + 1 is STATIC_TABLE[i]. */
// biome-ignore format: laid out as the RFC prints it, several entries a line
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

/** A table entry: a field, and whether its characters are well-formed (RFC 9113 §8.2.1, `wellFormedField`). */
interface TableEntry {
  readonly name: string;
  readonly value: string;
  readonly wellFormed: boolean;
}

/** The static table as entries, so an indexed field allocates nothing. */
const STATIC_ENTRIES: readonly TableEntry[] = STATIC_TABLE.map(([name, value]) => ({
  name,
  value,
  wellFormed: wellFormedField(name, value),
}));

const NO_BLOCK = new Uint8Array(0);

/** Thrown by the decoder below (defined in frames.ts, under the Huffman decoder that throws it too). */
export { HpackError };

interface DynamicEntry extends TableEntry {
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
  /** The block being decoded; between blocks none, so no read buffer of the socket is kept alive. */
  #block: Uint8Array = NO_BLOCK;
  #pos = 0;
  #end = 0;
  #wellFormed = true;

  constructor(tableSizeLimit = 4096) {
    this.#limit = tableSizeLimit;
    this.#maxSize = tableSizeLimit;
  }

  /**
   * Decodes `block[start, end)`, appending each field to `fields` as name, value (repeated
   * names stay apart). The whole block is always decoded, so the dynamic table stays in
   * step with the peer's; fields stop being appended once the list exceeds `maxListSize`
   * octets (RFC 9113 §6.5.2's accounting). Returns the list's size: above `maxListSize`,
   * the caller refuses the stream, not the connection. {@link HpackDecoder.wellFormed} then
   * tells whether every field's characters were well-formed.
   */
  decode(block: Uint8Array, start: number, end: number, fields: string[], maxListSize: number): number {
    this.#block = block;
    this.#pos = start;
    this.#end = end;
    let listSize = 0;
    let fieldSeen = false;
    let wellFormed = true;
    while (this.#pos < end) {
      const first = block[this.#pos] as number;
      let name: string;
      let value: string;
      if (first & 0x80) {
        const entry = this.#entry(this.#integer(7));
        ({ name, value } = entry);
        wellFormed &&= entry.wellFormed;
      } else if (first & 0x40) {
        const index = this.#integer(6);
        name = index === 0 ? this.#string() : this.#entry(index).name;
        value = this.#string();
        // Checked once, as the field enters the table: the requests that index it skip the check.
        const ok = wellFormedField(name, value);
        this.#add(name, value, ok);
        wellFormed &&= ok;
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
        wellFormed &&= wellFormedField(name, value);
      }
      fieldSeen = true;
      listSize += name.length + value.length + 32;
      if (listSize <= maxListSize) fields.push(name, value);
    }
    this.#block = NO_BLOCK;
    this.#wellFormed = wellFormed;
    return listSize;
  }

  /**
   * True when every field of the block last decoded has a well-formed name and value
   * (RFC 9113 §8.2.1, `wellFormedField`): what request-fields.ts would check again, character
   * by character, on every request that sends the same indexed fields.
   */
  get wellFormed(): boolean {
    return this.#wellFormed;
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
    return huffmanDecode(this.#block, start, start + length);
  }

  #entry(index: number): TableEntry {
    const entry = index <= STATIC_ENTRIES.length ? STATIC_ENTRIES[index - 1] : this.#dynamic[index - STATIC_ENTRIES.length - 1];
    if (entry === undefined) throw new HpackError(`header index ${index} is not in the tables`);
    return entry;
  }

  /** §4.4: evict from the oldest end until the new entry fits; one larger than the table empties it. */
  #add(name: string, value: string, wellFormed: boolean): void {
    const size = name.length + value.length + 32;
    this.#evict(size);
    if (size > this.#maxSize) return;
    this.#dynamic.unshift({ name, value, wellFormed, size });
    this.#size += size;
  }

  #evict(room: number): void {
    while (this.#size + room > this.#maxSize && this.#dynamic.length > 0) {
      this.#size -= (this.#dynamic.pop() as DynamicEntry).size;
    }
  }
}

/** The first static index of each name, for literals with an indexed name. */
const STATIC_NAME_INDEX = new Map<string, number>();
/** Static entries whose value matters, name + '\0' + value -> index, for indexed fields. */
const STATIC_FIELD_INDEX = new Map<string, number>();
STATIC_TABLE.forEach(([name, value], i) => {
  if (!STATIC_NAME_INDEX.has(name)) STATIC_NAME_INDEX.set(name, i + 1);
  if (value !== '') STATIC_FIELD_INDEX.set(`${name}\0${value}`, i + 1);
});

/** An outgoing header field value: a string, a number, or several values of one name. */
export type OutgoingFieldValue = string | number | readonly string[];

/** §8.2.1: no NUL, CR or LF in a value. */
const FIELD_VALUE = /^[^\0\r\n]*$/;

/** §5.1: `value` as an integer with an N-bit prefix, the prefix's other bits set from `first`. */
function pushInteger(out: number[], first: number, prefixBits: number, value: number): void {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    out.push(first | value);
    return;
  }
  out.push(first | max);
  for (value -= max; value >= 128; value = Math.floor(value / 128)) out.push((value % 128) | 0x80);
  out.push(value);
}

function pushString(out: number[], text: string): void {
  const bytes = Buffer.from(text, 'latin1');
  pushInteger(out, 0, 7, bytes.length);
  for (const byte of bytes) out.push(byte);
}

function pushField(out: number[], name: string, value: string): void {
  if (!isFieldName(name)) throw internalError(`invalid HTTP/2 header name ${JSON.stringify(name)}`);
  if (!FIELD_VALUE.test(value)) throw internalError(`invalid value for HTTP/2 header ${name}`);
  const indexed = STATIC_FIELD_INDEX.get(`${name}\0${value}`);
  if (indexed !== undefined) {
    pushInteger(out, 0x80, 7, indexed);
    return;
  }
  // §6.2.2: a literal without indexing, the name indexed when the static table has it.
  const nameIndex = STATIC_NAME_INDEX.get(name) ?? 0;
  pushInteger(out, 0x00, 4, nameIndex);
  if (nameIndex === 0) pushString(out, name);
  pushString(out, value);
}

/** Blocks of header sets that never change (frozen objects), encoded once. */
const FROZEN_BLOCKS = new WeakMap<object, Buffer>();

/**
 * Encodes a header set as one HPACK block, pseudo-headers first. Values are sent as
 * latin1 octets (callers pass ASCII: gRPC percent-encodes and base64s its values). Throws
 * TypeError for a name or value HTTP/2 does not allow. A frozen object is encoded once.
 *
 * @example
 * ```ts
 * const block = encodeHeaderBlock({ ':status': 200, 'content-type': 'application/grpc' });
 * ```
 */
export function encodeHeaderBlock(headers: Readonly<Record<string, OutgoingFieldValue>>): Buffer {
  const frozen = Object.isFrozen(headers);
  if (frozen) {
    const cached = FROZEN_BLOCKS.get(headers);
    if (cached !== undefined) return cached;
  }
  const out: number[] = [];
  const names = Object.keys(headers);
  for (const pseudo of [true, false]) {
    for (const name of names) {
      if ((name.charCodeAt(0) === 58) !== pseudo) continue;
      const value = headers[name] as OutgoingFieldValue;
      if (typeof value === 'object') for (const one of value) pushField(out, name, one);
      else pushField(out, name, String(value));
    }
  }
  const block = Buffer.from(out);
  if (frozen) FROZEN_BLOCKS.set(headers, block);
  return block;
}
