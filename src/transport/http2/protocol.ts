/** Small pieces of the gRPC over HTTP/2 protocol document (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md): Status-Message encoding and Timeout. */
import { Buffer } from 'node:buffer';

const HEX = '0123456789ABCDEF';

/**
 * Status-Message: UTF-8, then percent-encoding of every byte outside %x20-%x7E and of "%"
 * itself. Most messages are plain ASCII and pass through unchanged.
 */
export function percentEncode(message: string): string {
  let plain = true;
  for (let i = 0; i < message.length; i++) {
    const code = message.charCodeAt(i);
    if (code < 0x20 || code > 0x7e || code === 0x25) {
      plain = false;
      break;
    }
  }
  if (plain) return message;
  let out = '';
  for (const byte of Buffer.from(message, 'utf8')) {
    if (byte >= 0x20 && byte <= 0x7e && byte !== 0x25) out += String.fromCharCode(byte);
    else out += `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
  }
  return out;
}

/** Milliseconds per TimeoutUnit: Hour, Minute, Second, millisecond, microsecond, nanosecond. */
const UNIT_MS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/**
 * `grpc-timeout` in milliseconds: TimeoutValue (1 to 8 ASCII digits) then TimeoutUnit.
 * Returns NaN when the value does not follow that grammar.
 */
export function parseTimeout(value: string): number {
  const length = value.length;
  if (length < 2 || length > 9) return Number.NaN;
  const unit = UNIT_MS[value[length - 1] as string];
  if (unit === undefined) return Number.NaN;
  let amount = 0;
  for (let i = 0; i < length - 1; i++) {
    const digit = value.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return Number.NaN;
    amount = amount * 10 + digit;
  }
  return amount * unit;
}
