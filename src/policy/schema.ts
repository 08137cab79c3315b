/**
 * The JSON Schema (draft 2020-12) of a policy file, shipped in the package so editors and
 * CI can check a file before a server reads it. It is the one statement of the rules:
 * {@link checkPolicy} reads a policy against it (./json-schema.ts) and says where a file
 * breaks it; docs/policy.md documents every field.
 */

/**
 * The largest `perSecond` and `burst`: beyond a million a second, a rate no longer limits
 * anything one process signs, so this is the rate of a caller that is never held back.
 *
 * @example
 * ```ts
 * const unlimited: IssuanceRate = { perSecond: MAX_RATE, burst: MAX_RATE };
 * ```
 */
export const MAX_RATE = 1_000_000;

/**
 * JSON Schema of a {@link JwtPolicy} file.
 *
 * @example
 * ```ts
 * import { writeFileSync } from 'node:fs';
 * writeFileSync('jwt-policy.schema.json', JSON.stringify(JWT_POLICY_SCHEMA, null, 2)); // for an editor's "$schema"
 * ```
 */
export const JWT_POLICY_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'jwt-grpc issuance policy: which caller may get which tokens',
  type: 'object',
  additionalProperties: false,
  required: ['callers'],
  properties: {
    $schema: { type: 'string' },
    callers: {
      description: 'One entry per caller id: a client certificate\'s URI SAN as written (a SPIFFE ID), or "dns:" + its first DNS SAN.',
      type: 'object',
      propertyNames: { type: 'string', minLength: 1, errorMessage: 'a caller id may not be empty' },
      additionalProperties: { $ref: '#/$defs/caller' },
    },
    revokers: {
      description: 'Caller ids allowed to call RevokeJwt, beside the admin secret.',
      type: 'array',
      items: { type: 'string', minLength: 1 },
      uniqueItems: true,
    },
    defaultRate: {
      description: 'The issuance rate of every caller whose entry has none. Omitted: 100 tokens a second, a burst of 1000.',
      $ref: '#/$defs/rate',
    },
    exchange: {
      description:
        "Who may exchange which subjects' tokens for which audiences and scopes (docs/token-exchange.md). Omitted: every exchange is refused.",
      type: 'array',
      items: { $ref: '#/$defs/exchangeRule' },
    },
  },
  $defs: {
    rate: {
      description: 'Tokens a caller may get from one process: a bucket of "burst" tokens refilled at "perSecond".',
      type: 'object',
      additionalProperties: false,
      required: ['perSecond', 'burst'],
      properties: {
        perSecond: { type: 'number', exclusiveMinimum: 0, maximum: MAX_RATE },
        burst: { type: 'integer', minimum: 1, maximum: MAX_RATE },
      },
    },
    pattern: {
      description: 'A name as written; a trailing "*" matches any suffix, a lone "*" anything.',
      type: 'string',
      minLength: 1,
      pattern: '^[^*]*\\*?$',
      patternErrorMessage: '"*" may only end a pattern',
    },
    exchangeRule: {
      type: 'object',
      additionalProperties: false,
      required: ['subjects', 'audiences'],
      properties: {
        subjects: {
          description: 'Subjects, as the trust file maps them, whose tokens may be exchanged.',
          type: 'array',
          minItems: 1,
          items: { $ref: '#/$defs/pattern' },
        },
        actors: {
          description:
            "Who may exchange on their behalf: a caller id, or an actor token's mapped subject. Omitted: the subject itself only.",
          type: 'array',
          minItems: 1,
          items: { $ref: '#/$defs/pattern' },
        },
        audiences: {
          description: 'Audiences or resources the new token may be for.',
          type: 'array',
          minItems: 1,
          items: { $ref: '#/$defs/pattern' },
        },
        scopes: {
          description: "Scopes the new token may carry. Omitted: any of the subject token's.",
          type: 'array',
          items: { $ref: '#/$defs/pattern' },
        },
        grantScopes: {
          description: 'Scopes granted even when the subject token lacks them.',
          type: 'array',
          items: { type: 'string', minLength: 1 },
        },
        maxTtlSeconds: { description: 'Longest lifetime of the new token.', type: 'integer', minimum: 1 },
        outliveSubject: { description: 'The new token may outlive the subject token (up to maxTtlSeconds).', type: 'boolean' },
        rate: {
          description: "Exchanges this rule allows, all its subjects together. Omitted: the policy's defaultRate.",
          $ref: '#/$defs/rate',
        },
      },
    },
    caller: {
      type: 'object',
      additionalProperties: false,
      required: ['subjects'],
      properties: {
        subjects: {
          description: 'Subjects the caller may get; a request without one gets the first entry that has no "*".',
          type: 'array',
          minItems: 1,
          items: { $ref: '#/$defs/pattern' },
        },
        audiences: {
          description: 'Audiences the caller may ask for. Omitted: any.',
          type: 'array',
          minItems: 1,
          items: { $ref: '#/$defs/pattern' },
        },
        algorithms: {
          description: 'Algorithms the caller may ask for. Omitted: any the server signs with.',
          type: 'array',
          minItems: 1,
          items: { type: 'string', minLength: 1 },
        },
        maxTtlSeconds: { description: "Longest lifetime for this caller. Omitted: the server's maximum.", type: 'integer', minimum: 1 },
        claims: {
          description: 'Custom claim names the caller may set in claims_json. Omitted: none.',
          type: 'array',
          items: { type: 'string', minLength: 1 },
        },
        bind: { description: 'Bind this caller\'s tokens to its certificate (cnf "x5t#S256", RFC 8705).', type: 'boolean' },
        rate: { description: "Tokens this caller may get. Omitted: the policy's defaultRate.", $ref: '#/$defs/rate' },
      },
    },
  },
} as const;
