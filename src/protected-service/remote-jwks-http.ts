/**
 * The JWK Set over HTTP(S) for {@link createRemoteVerifier}: from an issuer URL through
 * OpenID discovery, or from a JWKS URL directly. It looks like a JwtClient's `getJwks`, so
 * the verifier keeps one set of cache rules (cooldown, max age, stale on failure,
 * unknown-kid refetch) whatever the source; each refetch is a conditional request
 * (`If-None-Match`), so an unchanged set costs a 304 and no parsing.
 */
import { JwtGrpcError, invalidOption } from '../base/errors.js';
import { fetchDocument } from './fetch-document.js';

/** Limits of an HTTP fetch of discovery or a JWK Set. */
export const HTTP_JWKS_DEFAULTS = {
  /** A fetch (discovery or the set) must complete within this long. */
  timeoutMs: 5_000,
  /** A larger document is refused, as it arrives: a JWK Set of a few keys is a few KiB. */
  maxBytes: 1 << 20,
} as const;

/**
 * Where a remote verifier reads the JWK Set over HTTP(S) instead of GetJwks.
 *
 * @example
 * ```ts
 * const byIssuer: HttpJwksLocation = { issuerUrl: 'https://auth.example' };            // discovery
 * const byUrl: HttpJwksLocation = { jwksUrl: 'https://auth.example/.well-known/jwks.json' };
 * ```
 */
export type HttpJwksLocation = { readonly issuerUrl: string | URL } | { readonly jwksUrl: string | URL };

/** The JwksIssuer shape the verifier uses, with the issuer the discovery names (for `iss`). @internal */
export interface HttpJwksSource {
  readonly target: string;
  /** The issuer URL when found by discovery: the `iss` tokens must carry unless the options say otherwise. */
  readonly issuer: string | undefined;
  getJwks(): Promise<{ jwks_json: string }>;
}

function httpUrl(value: unknown, name: string): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw invalidOption(name, `must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalidOption(name, `must be an http(s) URL, got ${JSON.stringify(value)}`);
  return url;
}

/** Whether `value` names an HTTP location rather than a JwtClient. @internal */
export function isHttpJwksLocation(value: unknown): value is HttpJwksLocation {
  return typeof value === 'object' && value !== null && ('issuerUrl' in value || 'jwksUrl' in value);
}

/** GETs `url` within the limits; a 304 keeps the ETag it revalidated. */
async function get(url: URL, etag: string | undefined): Promise<{ status: number; etag: string | undefined; body: string }> {
  const headers = { accept: 'application/json', ...(etag !== undefined && { 'if-none-match': etag }) };
  const response = await fetchDocument(url, HTTP_JWKS_DEFAULTS, headers);
  if (response.status === 304) return { status: 304, etag: response.headers.get('etag') ?? etag, body: '' };
  if (response.status !== 200) throw new JwtGrpcError('ERR_FETCH', `GET ${url.href}: HTTP ${response.status}`);
  return { status: 200, etag: response.headers.get('etag') ?? undefined, body: response.body };
}

/**
 * The `jwks_uri` of `issuer` (OpenID Connect Discovery 1.0 section 4: the issuer plus
 * `/.well-known/openid-configuration`), after checking that the document names exactly
 * that issuer (section 4.3), so a token's `iss` and its keys come from the same place.
 */
async function discover(issuer: string): Promise<URL> {
  const url = new URL(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`);
  const { body } = await get(url, undefined);
  let document: { issuer?: unknown; jwks_uri?: unknown };
  try {
    document = JSON.parse(body) as typeof document;
  } catch {
    throw new JwtGrpcError('ERR_FETCH', `GET ${url.href}: not JSON`);
  }
  if (document.issuer !== issuer)
    throw new JwtGrpcError(
      'ERR_FETCH',
      `discovery at ${url.href} names issuer ${JSON.stringify(document.issuer)}, not ${JSON.stringify(issuer)}`,
    );
  if (typeof document.jwks_uri !== 'string') throw new JwtGrpcError('ERR_FETCH', `discovery at ${url.href} has no jwks_uri`);
  return httpUrl(document.jwks_uri, 'jwks_uri');
}

/** A JWK Set source over HTTP(S), validated now; discovery runs at the first fetch. @internal */
export function httpJwksSource(location: HttpJwksLocation): HttpJwksSource {
  // Kept as given (a string stays byte for byte): discovery and `iss` compare it exactly.
  const issuer = 'issuerUrl' in location ? (httpUrl(location.issuerUrl, 'issuerUrl'), String(location.issuerUrl)) : undefined;
  let jwksUrl = 'jwksUrl' in location ? httpUrl(location.jwksUrl, 'jwksUrl') : undefined;
  let cached: { etag: string; body: string } | undefined;
  return {
    target: issuer ?? (jwksUrl as URL).href,
    issuer,
    async getJwks() {
      jwksUrl ??= await discover(issuer as string);
      const answer = await get(jwksUrl, cached?.etag);
      if (answer.status === 304 && cached !== undefined) return { jwks_json: cached.body };
      cached = answer.etag === undefined ? undefined : { etag: answer.etag, body: answer.body };
      return { jwks_json: answer.body };
    },
  };
}
