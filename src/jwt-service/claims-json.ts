/**
 * What `JSON.parse` then `JSON.stringify` would change in claims_json, found in the text
 * itself: the service signs the re-serialized claims, so anything that does not survive
 * that round trip would be signed as something the caller did not ask for. Refused:
 *
 * - a number whose re-serialization, `JSON.stringify(Number(token))`, denotes another
 *   decimal value: out of the double range (`1e400` would be signed as `null`, `1e-400`
 *   as `0`), or more digits than a double holds (`18446744073709551617`,
 *   `1.0000000000000000001`). Other spellings of the same value are fine (`1e21`, `1.50`,
 *   `18446744073709552000`: what a double prints is what is signed);
 * - negative zero (`-0`, `-0.0`): `JSON.stringify` drops its sign;
 * - a key that appears twice in one object: `JSON.parse` keeps the last one silently;
 * - a string or key with a lone surrogate (`"\ud800"`): UTF-8 cannot carry it.
 *
 * One pass over text `JSON.parse` accepted, with an explicit stack (no recursion).
 */

/** Longest number or key an error message quotes; the rest is elided. */
const MAX_QUOTED = 40;

/** Matches a lone surrogate: with the `u` flag a well-formed pair is one code point, not two halves. */
const LONE_SURROGATE = /\p{Cs}/u;

/** An object or array being read, and where its current member is. */
interface Frame {
  /** The keys seen so far; undefined for an array. */
  readonly keys: Set<string> | undefined;
  /** The current key (object) or index (array), for the path in a message. */
  member: string | number;
  /** True where the next string is a key. */
  expectKey: boolean;
}

/**
 * The first thing in `json` (text `JSON.parse` accepted) that would not survive the
 * round trip, as `$.path: problem`; undefined when everything does.
 *
 * @example
 * ```ts
 * claimsJsonProblem('{"n":1e400}'); // '$.n: number 1e400 does not survive a round trip (it would be signed as null)'
 * claimsJsonProblem('{"n":1.5,"s":"ok"}'); // undefined
 * ```
 */
export function claimsJsonProblem(json: string): string | undefined {
  const stack: Frame[] = [];
  let i = 0;
  while (i < json.length) {
    const c = json.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      stack.push(c === 0x7b ? { keys: new Set(), member: '', expectKey: true } : { keys: undefined, member: 0, expectKey: false });
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      i++;
    } else if (c === 0x2c /* , */) {
      if (top !== undefined) {
        if (top.keys === undefined) top.member = (top.member as number) + 1;
        else top.expectKey = true;
      }
      i++;
    } else if (c === 0x22 /* " */) {
      const end = stringEnd(json, i);
      const problem = top?.expectKey === true ? readKey(json.slice(i, end), top, stack) : stringProblem(json.slice(i, end), stack);
      if (problem !== undefined) return problem;
      i = end;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const end = numberEnd(json, i);
      const problem = numberProblem(json.slice(i, end));
      if (problem !== undefined) return `${path(stack)}: ${problem}`;
      i = end;
    } else i++; // whitespace, ':', and the letters of true, false, null
  }
  return undefined;
}

/** The index just past the string token that opens at `start` (text already valid JSON). */
function stringEnd(json: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const c = json.charCodeAt(i);
    if (c === 0x5c /* \ */) i += 2;
    else if (c === 0x22) return i + 1;
    else i++;
  }
}

/** The index just past the number token that starts at `start`. */
function numberEnd(json: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const c = json.charCodeAt(i);
    // digits . + - e E
    if ((c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2b || c === 0x2d || c === 0x65 || c === 0x45) i++;
    else return i;
  }
}

/** A string token's value: only one with escapes needs decoding. */
function stringValue(token: string): string {
  return token.includes('\\') ? (JSON.parse(token) as string) : token.slice(1, -1);
}

/** Records the key `token` in the innermost object; a repeat or a lone surrogate is the problem. */
function readKey(token: string, top: Frame, stack: readonly Frame[]): string | undefined {
  const key = stringValue(token);
  top.member = key;
  top.expectKey = false;
  if (LONE_SURROGATE.test(key)) return `${path(stack)}: key has a lone surrogate, which UTF-8 cannot carry`;
  if (top.keys?.has(key) === true) return `${path(stack)}: duplicate key ${quote(key)}`;
  top.keys?.add(key);
  return undefined;
}

function stringProblem(token: string, stack: readonly Frame[]): string | undefined {
  return LONE_SURROGATE.test(stringValue(token)) ? `${path(stack)}: string has a lone surrogate, which UTF-8 cannot carry` : undefined;
}

/** Why the number `token` would not be signed as written, or undefined. */
function numberProblem(token: string): string | undefined {
  const value = Number(token);
  const signed = JSON.stringify(value);
  // The common case: the token is already the canonical spelling.
  if (signed === token) return undefined;
  const negativeZero = Object.is(value, -0);
  if (Number.isFinite(value) && !negativeZero && sameDecimal(token, signed)) return undefined;
  if (negativeZero && decimal(token).digits === '') return `number ${shorten(token)} is negative zero, which would be signed as 0`;
  return `number ${shorten(token)} does not survive a round trip (it would be signed as ${signed})`;
}

/**
 * True when two JSON number tokens denote the same decimal value: each reduced to sign,
 * significant digits and a power of ten, zero being zero whatever its sign or exponent.
 */
function sameDecimal(a: string, b: string): boolean {
  const x = decimal(a);
  const y = decimal(b);
  return x.digits === y.digits && (x.digits === '' || (x.negative === y.negative && x.exponent === y.exponent));
}

/** A number token as `digits` × 10^`exponent`, digits without leading or trailing zeros ('' for zero). */
function decimal(token: string): { negative: boolean; digits: string; exponent: number } {
  const negative = token.startsWith('-');
  const unsigned = negative ? token.slice(1) : token;
  const e = unsigned.search(/[eE]/);
  const mantissa = e < 0 ? unsigned : unsigned.slice(0, e);
  // An exponent too large for a safe integer only reaches here with a value that is 0 or not finite.
  let exponent = e < 0 ? 0 : Number(unsigned.slice(e + 1));
  const dot = mantissa.indexOf('.');
  let digits = mantissa;
  if (dot >= 0) {
    exponent -= mantissa.length - dot - 1;
    digits = mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  }
  digits = digits.replace(/^0+/, '');
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  return { negative, digits: trimmed, exponent };
}

/** The JSON path of the current member, `$.a[2]["odd key"]`. */
function path(stack: readonly Frame[]): string {
  let text = '$';
  for (const frame of stack) {
    if (typeof frame.member === 'number') text += `[${frame.member}]`;
    else text += /^[A-Za-z_$][\w$]*$/.test(frame.member) ? `.${frame.member}` : `[${quote(frame.member)}]`;
  }
  return text;
}

/** A key as JSON (lone surrogates escaped), elided past {@link MAX_QUOTED} characters. */
function quote(key: string): string {
  return JSON.stringify(shorten(key));
}

function shorten(text: string): string {
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}...` : text;
}
