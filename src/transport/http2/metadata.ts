/**
 * Custom-Metadata (protocol document (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md)) to and from HTTP/2 header fields: `-bin` values are
 * base64 (padded or not on the way in, unpadded on the way out), every other value
 * printable ASCII.
 */
import { Buffer } from 'node:buffer';
import { CallMetadata, type CallMetadataValue, isReservedMetadataKey } from '../../contracts/handler-api.js';
import { JwtGrpcError } from '../../base/errors.js';

/** An outgoing header (or trailer) block: one value, or several of one name. */
export type HeaderFields = Record<string, string | string[] | number>;

/** Header-Name: 1*( %x30-39 / %x61-7A / "_" / "-" / "." ). */
const HEADER_NAME = /^[0-9a-z_.-]+$/;
/** ASCII-Value: 1*( %x20-%x7E ). */
const ASCII_VALUE = /^[\x20-\x7e]*$/;

/**
 * The request's metadata from the raw header list (name, value, name, value...),
 * which keeps repeated names apart; `-bin` values joined with "," are split.
 */
export function metadataFromRawHeaders(raw: readonly string[]): CallMetadata {
  const metadata = new CallMetadata();
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (isReservedMetadataKey(name)) continue;
    const value = raw[i + 1] as string;
    if (name.endsWith('-bin')) {
      for (const part of value.split(',')) metadata.add(name, Buffer.from(part.trim(), 'base64'));
    } else {
      metadata.add(name, value);
    }
  }
  return metadata;
}

function headerValue(name: string, value: CallMetadataValue): string {
  if (name.endsWith('-bin')) {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    // The protocol document: emit un-padded base64.
    return bytes.toString('base64').replace(/=+$/, '');
  }
  if (typeof value !== 'string' || !ASCII_VALUE.test(value)) {
    throw new JwtGrpcError('ERR_INVALID_ARGUMENT', `metadata ${name}: a value of a key without "-bin" must be a printable ASCII string`, {
      field: name,
    });
  }
  return value;
}

/**
 * The trailer that carries a failed call's `google.rpc.Status` (code, message, typed
 * details): gRPC's richer error model (https://grpc.io/docs/guides/error/). The one
 * reserved key a handler may set, in the trailers only, as on a grpc-js server.
 */
export const STATUS_DETAILS_KEY = 'grpc-status-details-bin';

/**
 * Adds `metadata` to an outgoing header (or trailer) object. Throws JwtGrpcError (`ERR_INVALID_ARGUMENT`) for a key
 * or value the protocol does not allow, and for gRPC's reserved keys ({@link STATUS_DETAILS_KEY} is allowed in trailers).
 */
export function addMetadataHeaders(target: HeaderFields, metadata: CallMetadata, block: 'headers' | 'trailers' = 'headers'): void {
  for (const [name, values] of metadata.entries()) {
    const statusDetails = block === 'trailers' && name === STATUS_DETAILS_KEY;
    if (!HEADER_NAME.test(name) || (!statusDetails && (name.startsWith('grpc-') || isReservedMetadataKey(name)))) {
      throw new JwtGrpcError('ERR_INVALID_ARGUMENT', `metadata key ${JSON.stringify(name)} is reserved or not a valid gRPC header name`, {
        field: name,
      });
    }
    if (values.length === 0) continue;
    const encoded = values.map((value) => headerValue(name, value));
    const existing = target[name];
    if (existing === undefined) target[name] = encoded.length === 1 ? (encoded[0] as string) : encoded;
    else target[name] = [...(Array.isArray(existing) ? existing : [String(existing)]), ...encoded];
  }
}
