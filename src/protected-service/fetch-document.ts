/**
 * The one way a remote verifier reads a document from outside (OpenID discovery, a JWK Set,
 * a Status List Token): one GET, redirects refused, a deadline over the request and its
 * body, and the body read as a stream and abandoned at its byte limit. Whoever serves the
 * document chooses its size: a `content-length` over the limit is refused before reading,
 * and a chunked or close-delimited body is cancelled (its connection closed) at the first
 * chunk that passes the limit, so a verifier holds at most the limit plus one chunk
 * whatever is sent. Every failure is a JwtGrpcError `ERR_FETCH` naming the URL.
 */
import { Buffer } from 'node:buffer';
import { JwtGrpcError } from '../base/errors.js';

/** How long a fetch may take and how large its body may be. @internal */
export interface FetchLimits {
  /** The request and its whole body must complete within this long. */
  readonly timeoutMs: number;
  /** A larger body is refused, declared or not. */
  readonly maxBytes: number;
}

/** A fetched document: its status and headers, and its body when the status is 200 (else empty). @internal */
export interface FetchedDocument {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

/**
 * GETs `url` within `limits`; the body of a 200 is read, that of any other status released
 * unread. Rejects with `ERR_FETCH` when the issuer cannot be reached, answers too late,
 * redirects, or sends a body over `limits.maxBytes`. @internal
 *
 * @example
 * ```ts
 * const { status, body } = await fetchDocument('https://auth.example/jwks.json', { timeoutMs: 5_000, maxBytes: 1 << 20 }, {
 *   accept: 'application/json',
 * });
 * ```
 */
export async function fetchDocument(url: string | URL, limits: FetchLimits, headers: Record<string, string>): Promise<FetchedDocument> {
  const href = String(url);
  try {
    // Redirects are refused, not followed: the issuer names its own URLs, and a 3xx could lead anywhere.
    const response = await fetch(url, { headers, redirect: 'error', signal: AbortSignal.timeout(limits.timeoutMs) });
    if (response.status !== 200) {
      await response.body?.cancel();
      return { status: response.status, headers: response.headers, body: '' };
    }
    return { status: 200, headers: response.headers, body: await readBounded(response, href, limits.maxBytes) };
  } catch (err) {
    throw err instanceof JwtGrpcError ? err : unreachable(href, limits.timeoutMs, err);
  }
}

/** The body of `response`, refused (and its connection closed) once it passes `maxBytes`. */
async function readBounded(response: Response, href: string, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new JwtGrpcError('ERR_FETCH', `GET ${href}: ${declared} bytes, more than the limit of ${maxBytes}`);
  }
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    length += read.value.byteLength;
    if (length > maxBytes) {
      await reader.cancel();
      throw new JwtGrpcError('ERR_FETCH', `GET ${href}: more than the limit of ${maxBytes} bytes`);
    }
    chunks.push(read.value);
  }
  return Buffer.concat(chunks, length).toString('utf8');
}

/** An error's own fields, read by shape: fetch's errors may come from another realm (a VM context), where `instanceof Error` is false. */
interface ErrorShape {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly code?: unknown;
  readonly cause?: unknown;
}

/** Why a GET got no document: its deadline, or what the network said (refused, reset, a redirect). */
function unreachable(href: string, timeoutMs: number, err: unknown): JwtGrpcError {
  const error = (typeof err === 'object' && err !== null ? err : {}) as ErrorShape;
  if (error.name === 'TimeoutError')
    return new JwtGrpcError('ERR_FETCH', `GET ${href}: no complete answer within ${timeoutMs} ms`, { cause: err });
  // fetch says only "fetch failed"; its cause says what happened ("connect ECONNREFUSED ...", "unexpected redirect").
  const cause = (typeof error.cause === 'object' && error.cause !== null ? error.cause : error) as ErrorShape;
  const why = typeof cause.message === 'string' && cause.message !== '' ? cause.message : String(err);
  return new JwtGrpcError('ERR_FETCH', `GET ${href}: ${why}`, { cause: err });
}
