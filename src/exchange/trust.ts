/**
 * The trust file of token exchange (RFC 8693, docs/token-exchange.md): whose tokens the
 * server takes as subject and actor tokens, what they must carry for it, and what of them
 * reaches the token it issues. Read like the policy file: a JSON value checked field by
 * against its shipped schema (./trust-schema.ts, by the reader of ../policy/json-schema.ts),
 * an unknown field refused with the nearest known one, every error naming the file, the JSON
 * path and the problem.
 */
import { readFile } from 'node:fs/promises';
import { isAlgorithm } from '../algorithms/names.js';
import { JwtGrpcError } from '../base/errors.js';
import { type JsonSchema, SchemaProblem, memberOf, readJson } from '../policy/json-schema.js';
import { RESERVED_CLAIMS } from '../jwt-service/request-claims.js';
import { JWT_TRUST_SCHEMA } from './trust-schema.js';

/**
 * What the server takes from the tokens of one issuer.
 *
 * @example
 * ```ts
 * const cluster: TrustedIssuer = {
 *   jwksUrl: 'https://10.0.0.1:6443/openid/v1/jwks',
 *   audiences: ['jwt-grpc'],
 *   subject: 'k8s:{kubernetes.io/namespace}/{kubernetes.io/serviceaccount/name}',
 *   maxTtlSeconds: 600,
 * };
 * ```
 */
export interface TrustedIssuer {
  /** The issuer's JWK Set at this http(s) URL. Omitted (and no `jwksFile`): found by OpenID discovery at the issuer URL. */
  readonly jwksUrl?: string;
  /** The issuer's JWK Set in this file, read at start. */
  readonly jwksFile?: string;
  /** Required: the `aud` its tokens must carry (one of these) to be exchanged here. */
  readonly audiences: readonly string[];
  /**
   * The subject of the token issued: `{claim}` placeholders (a `/` reaches into an object,
   * `{kubernetes.io/namespace}`) filled from the token's claims. Default `{sub}`.
   */
  readonly subject?: string;
  /** Claims of its tokens copied into the token issued. Default: none. */
  readonly claims?: readonly string[];
  /** Longest lifetime of a token issued for one of its tokens. Default: the server's maxTtlSeconds. */
  readonly maxTtlSeconds?: number;
}

/**
 * The trust file: tokens this server issued (`self`) and other issuers' by their `iss`.
 *
 * @example
 * ```ts
 * const trust: TrustFile = {
 *   self: { audiences: ['orders'], maxTtlSeconds: 300 },
 *   issuers: { 'https://kubernetes.default.svc.cluster.local': { audiences: ['jwt-grpc'] } },
 * };
 * ```
 */
export interface TrustFile {
  /** This server's own tokens (verified with its keys; a revoked one is refused). Omitted: they are not exchanged. */
  readonly self?: Omit<TrustedIssuer, 'jwksUrl' | 'jwksFile'>;
  /** Other issuers, by their `iss` exactly as their tokens carry it. */
  readonly issuers?: Readonly<Record<string, TrustedIssuer>>;
  /** The algorithm of the tokens issued. Default: the first the keys sign with that a JWK Set can publish (not HMAC), else the first. */
  readonly algorithm?: string;
}

/**
 * Claims an exchange sets itself, never copied from a token: the registered and service
 * ones, and those of RFC 8693 section 4 (`act`, `scope`, `may_act`).
 */
export const EXCHANGE_CLAIMS: ReadonlySet<string> = new Set([...RESERVED_CLAIMS, 'act', 'scope', 'scp', 'may_act']);

/** A `{claim/path}` placeholder; anything between braces must be one. */
const PLACEHOLDER = /\{([^{}]*)\}/g;

/** The claim paths of a subject template's placeholders, in order. */
export function templatePaths(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((match) => match[1] as string);
}

/** What is wrong with a subject template, or undefined. */
function templateProblem(template: string): string | undefined {
  const paths = templatePaths(template);
  const empty = paths.find((path) => path.split('/').some((part) => part.length === 0));
  if (empty !== undefined) return `placeholder {${empty}} names no claim`;
  if (/[{}]/.test(template.replace(PLACEHOLDER, ''))) return 'a brace outside a {claim} placeholder';
  if (paths.length === 0) return 'names no claim: every token would get the same subject';
  return undefined;
}

function isHttpUrl(value: string): boolean {
  return /^https?:\/\/[^/]/i.test(value) && URL.canParse(value);
}

/** What the schema's keywords do not say of one issuer's entry (its shape is the schema's). */
function checkEntry(entry: TrustedIssuer, path: string): void {
  if (entry.subject !== undefined) {
    const problem = templateProblem(entry.subject);
    if (problem !== undefined) throw new SchemaProblem(`${path}.subject`, `${JSON.stringify(entry.subject)}: ${problem}`);
  }
  entry.claims?.forEach((claim, index) => {
    if (EXCHANGE_CLAIMS.has(claim)) throw new SchemaProblem(`${path}.claims[${index}]`, `"${claim}" is set by the exchange itself`);
  });
  if (entry.jwksUrl !== undefined && !isHttpUrl(entry.jwksUrl))
    throw new SchemaProblem(`${path}.jwksUrl`, `must be an http(s) URL, got ${JSON.stringify(entry.jwksUrl)}`);
  if (entry.jwksUrl !== undefined && entry.jwksFile !== undefined)
    throw new SchemaProblem(`${path}.jwksFile`, 'give jwksUrl or jwksFile, not both');
}

function readTrust(value: unknown): TrustFile {
  const trust = readJson(JWT_TRUST_SCHEMA as JsonSchema, value) as TrustFile;
  if (trust.self !== undefined) checkEntry(trust.self, '$.self');
  for (const [iss, entry] of Object.entries(trust.issuers ?? {})) {
    const path = memberOf('$.issuers', iss);
    checkEntry(entry, path);
    // The issuer URL is where discovery looks, unless the keys are named otherwise.
    if (entry.jwksUrl === undefined && entry.jwksFile === undefined && !isHttpUrl(iss))
      throw new SchemaProblem(
        path,
        `must be an http(s) URL, for OpenID discovery, unless it names its keys (jwksUrl, jwksFile); got ${JSON.stringify(iss)}`,
      );
  }
  if (trust.self === undefined && Object.keys(trust.issuers ?? {}).length === 0)
    throw new SchemaProblem('$', 'names no issuer: give self, issuers, or both');
  if (trust.algorithm !== undefined && !isAlgorithm(trust.algorithm))
    throw new SchemaProblem('$.algorithm', `is not an algorithm jwt-grpc signs with, got ${JSON.stringify(trust.algorithm)}`);
  return trust;
}

/**
 * Checks a trust file given in code, or parsed from a file named `source`; throws
 * `ERR_INVALID_OPTION` whose message names the source, the JSON path and the problem.
 *
 * @example
 * ```ts
 * const trust = checkTrust({ self: { audiences: ['orders'] } });
 * ```
 */
export function checkTrust(value: unknown, source = 'option trust'): TrustFile {
  try {
    return readTrust(value);
  } catch (err) {
    if (!(err instanceof SchemaProblem)) throw err;
    throw new JwtGrpcError('ERR_INVALID_OPTION', `${source}: ${err.path}: ${err.message}`, { field: 'trustFile' });
  }
}

/**
 * Reads and checks a trust file (JSON, schema {@link JWT_TRUST_SCHEMA}). Throws
 * `ERR_INVALID_OPTION` with one line: the file, the JSON path, the problem.
 *
 * @example
 * ```ts
 * const trust = await loadTrust('trust.json');
 * ```
 */
export async function loadTrust(file: string): Promise<TrustFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new JwtGrpcError('ERR_INVALID_OPTION', `trust file ${file}: cannot read it: ${(err as NodeJS.ErrnoException).code ?? err}`, {
      field: 'trustFile',
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new JwtGrpcError('ERR_INVALID_OPTION', `trust file ${file}: $: not valid JSON (${(err as Error).message})`, {
      field: 'trustFile',
    });
  }
  return checkTrust(parsed, `trust file ${file}`);
}
