/**
 * The JSON Schema (draft 2020-12) of a trust file, shipped in the package beside the
 * policy's (JWT_POLICY_SCHEMA) so editors and CI can check a file before a server reads it.
 * {@link checkTrust} reads a file against this schema itself (../policy/json-schema.ts), then
 * checks what no keyword it reads says: a subject template's placeholders, claims the
 * exchange sets itself, an issuer that names its keys, at least one issuer, one of `jwksUrl`
 * and `jwksFile`. docs/token-exchange.md documents every field.
 */

const ISSUER_PROPERTIES = {
  audiences: {
    description: 'Required: the aud its tokens must carry (one of these) to be exchanged here.',
    type: 'array',
    minItems: 1,
    items: { type: 'string', minLength: 1 },
  },
  subject: {
    description:
      'The subject of the token issued: {claim} placeholders ("/" reaches into an object) filled from the token. Default "{sub}".',
    type: 'string',
    pattern: '\\{[^{}]+\\}',
    patternErrorMessage: 'names no claim: every token would get the same subject (a {claim} placeholder is needed)',
  },
  claims: { description: 'Claims copied into the token issued. Default: none.', type: 'array', items: { type: 'string', minLength: 1 } },
  maxTtlSeconds: {
    description: "Longest lifetime of a token issued for one of its tokens. Default: the server's maxTtlSeconds.",
    type: 'integer',
    minimum: 1,
  },
} as const;

/**
 * JSON Schema of a {@link TrustFile}.
 *
 * @example
 * ```ts
 * import { writeFileSync } from 'node:fs';
 * writeFileSync('jwt-trust.schema.json', JSON.stringify(JWT_TRUST_SCHEMA, null, 2)); // for an editor's "$schema"
 * ```
 */
export const JWT_TRUST_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'jwt-grpc token exchange trust: whose tokens may be exchanged',
  description: 'At least one issuer: self, issuers, or both.',
  type: 'object',
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    self: { description: "This server's own tokens.", $ref: '#/$defs/self' },
    issuers: {
      description: 'Other issuers, by their iss exactly as their tokens carry it.',
      type: 'object',
      propertyNames: { type: 'string', minLength: 1 },
      additionalProperties: { $ref: '#/$defs/issuer' },
    },
    algorithm: { description: 'The algorithm of the tokens issued. Default: the first non-HMAC one the keys sign with.', type: 'string' },
  },
  $defs: {
    self: { type: 'object', additionalProperties: false, required: ['audiences'], properties: ISSUER_PROPERTIES },
    issuer: {
      type: 'object',
      additionalProperties: false,
      description: 'jwksUrl or jwksFile, not both; with neither, the issuer URL must be http(s), for OpenID discovery.',
      required: ['audiences'],
      properties: {
        ...ISSUER_PROPERTIES,
        jwksUrl: {
          description: "The issuer's JWK Set at this URL. Omitted: OpenID discovery at the issuer URL.",
          type: 'string',
          pattern: '^https?://',
        },
        jwksFile: { description: "The issuer's JWK Set in this file, read at start.", type: 'string', minLength: 1 },
      },
    },
  },
} as const;
