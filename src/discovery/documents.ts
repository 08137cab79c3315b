/**
 * The two public documents: the JWK Set and the OpenID Provider Metadata (OpenID Connect
 * Discovery 1.0, section 3: https://openid.net/specs/openid-connect-discovery-1_0.html#ProviderMetadata).
 */
import { Buffer } from 'node:buffer';
import { invalidOption } from '../base/errors.js';
import { exportKeys } from '../keys/export.js';
import type { KeySet } from '../keys/key-set.js';
import { strongEtag } from '../documents/etag.js';

/** A document ready to send: its bytes and their ETag. @internal */
export interface Representation {
  readonly body: Buffer;
  readonly etag: string;
}

/** Where the documents live under an issuer: the path the discovery spec appends, and ours. */
export const CONFIGURATION_SUFFIX = '/.well-known/openid-configuration';
export const JWKS_SUFFIX = '/.well-known/jwks.json';

/**
 * Checks an issuer for discovery: an http(s) URL with no query or fragment (section 3 says
 * https; http is accepted for loopback tests and TLS terminated in front). Returns the path
 * under which the documents are also served: '' for `https://auth.example`, `/tenant-a`
 * for `https://auth.example/tenant-a` (section 4.1: the suffix is appended to the path). @internal
 */
export function issuerPath(issuer: unknown, label = 'issuer'): string {
  if (typeof issuer !== 'string' || issuer.length === 0) {
    throw invalidOption(label, 'is required to serve discovery on the HTTP port: the documents must name the issuer the tokens carry');
  }
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw invalidOption(label, `must be an http(s) URL to serve discovery, got ${JSON.stringify(issuer)}`);
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.search !== '' ||
    url.hash !== '' ||
    issuer.includes('?') ||
    issuer.includes('#')
  ) {
    throw invalidOption(label, `must be an http(s) URL without query or fragment to serve discovery, got ${JSON.stringify(issuer)}`);
  }
  return url.pathname.replace(/\/+$/, '');
}

function representation(document: unknown): Representation {
  const body = Buffer.from(JSON.stringify(document));
  return { body, etag: strongEtag(body) };
}

/** The public JWK Set of `keys`, exactly what GetJwks serves: no HMAC secret, no private member. @internal */
export function jwksDocument(keys: KeySet): Representation {
  return representation(exportKeys(keys));
}

/**
 * The OpenID Provider Metadata of `issuer` (byte for byte as given: verifiers compare it
 * with `iss`). Only fields that mean something here: no authorization endpoint; a token
 * endpoint only with `tokenEndpoint` (token exchange, RFC 8693, with a trust file), and
 * then its one grant type (RFC 8414 section 2: `token_endpoint`, `grant_types_supported`)
 * and `none` as its client authentication (it authenticates no client). @internal
 */
export function configurationDocument(issuer: string, keys: KeySet, tokenEndpoint = false): Representation {
  // HMAC tokens cannot be checked with a published key: their algorithms are not listed.
  const algorithms = keys.signingAlgorithms.filter((alg) => !alg.startsWith('HS'));
  return representation({
    issuer,
    jwks_uri: `${issuer.replace(/\/+$/, '')}${JWKS_SUFFIX}`,
    // Required by section 3 though meaningless without an authorization endpoint: the minimum.
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: algorithms,
    ...(tokenEndpoint && {
      token_endpoint: `${issuer.replace(/\/+$/, '')}/token`,
      grant_types_supported: ['urn:ietf:params:oauth:grant-type:token-exchange'],
      token_endpoint_auth_methods_supported: ['none'],
    }),
  });
}
