/**
 * The trust file of token exchange (RFC 8693, docs/token-exchange.md): whose tokens the
 * server takes as subject and actor tokens, what they must carry for it, and what of them
 * reaches the token it issues. Read like the policy file: a JSON value checked field by
 * field, an unknown field refused with the nearest known one, every error naming the file,
 * the JSON path and the problem (../options/policy.ts has the readers both use).
 */
import { readFile } from 'node:fs/promises';
import { isAlgorithm } from '../algorithms/names.js';
import { JwtGrpcError } from '../errors.js';
import { PolicyProblem, key, object, seconds, strings } from '../options/policy.js';
import { RESERVED_CLAIMS } from '../jwt-service/request-claims.js';

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

const TOP_FIELDS = new Set(['$schema', 'self', 'issuers', 'algorithm']);
const SELF_FIELDS = new Set(['audiences', 'subject', 'claims', 'maxTtlSeconds']);
const ISSUER_FIELDS = new Set([...SELF_FIELDS, 'jwksUrl', 'jwksFile']);

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

function httpUrl(value: unknown, path: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^https?:\/\/[^/]/i.test(value) || !URL.canParse(value))
    throw new PolicyProblem(path, `must be an http(s) URL, got ${JSON.stringify(value)}`);
  return value;
}

function entry(value: unknown, path: string, fields: ReadonlySet<string>): TrustedIssuer {
  const fieldsOf = object(value, path, fields);
  const audiences = strings(fieldsOf['audiences'], `${path}.audiences`, { minItems: 1, patterns: false });
  if (audiences === undefined)
    throw new PolicyProblem(
      `${path}.audiences`,
      'is required: the aud its tokens carry for this server (a token for another service would pass)',
    );
  const subject = fieldsOf['subject'];
  if (subject !== undefined) {
    if (typeof subject !== 'string') throw new PolicyProblem(`${path}.subject`, 'must be a string such as "{sub}"');
    const problem = templateProblem(subject);
    if (problem !== undefined) throw new PolicyProblem(`${path}.subject`, `${JSON.stringify(subject)}: ${problem}`);
  }
  const claims = strings(fieldsOf['claims'], `${path}.claims`, { minItems: 0, patterns: false });
  claims?.forEach((claim, index) => {
    if (EXCHANGE_CLAIMS.has(claim)) throw new PolicyProblem(`${path}.claims[${index}]`, `"${claim}" is set by the exchange itself`);
  });
  const maxTtlSeconds = seconds(fieldsOf['maxTtlSeconds'], `${path}.maxTtlSeconds`);
  const jwksUrl = httpUrl(fieldsOf['jwksUrl'], `${path}.jwksUrl`);
  const jwksFile = fieldsOf['jwksFile'];
  if (jwksFile !== undefined && (typeof jwksFile !== 'string' || jwksFile.length === 0))
    throw new PolicyProblem(`${path}.jwksFile`, 'must be a file name');
  if (jwksUrl !== undefined && jwksFile !== undefined) throw new PolicyProblem(`${path}.jwksFile`, 'give jwksUrl or jwksFile, not both');
  return {
    audiences,
    ...(subject !== undefined && { subject: subject as string }),
    ...(claims !== undefined && { claims }),
    ...(maxTtlSeconds !== undefined && { maxTtlSeconds }),
    ...(jwksUrl !== undefined && { jwksUrl }),
    ...(jwksFile !== undefined && { jwksFile: jwksFile as string }),
  };
}

function readTrust(value: unknown): TrustFile {
  const top = object(value, '$', TOP_FIELDS);
  const self = top['self'] === undefined ? undefined : entry(top['self'], '$.self', SELF_FIELDS);
  let issuers: Record<string, TrustedIssuer> | undefined;
  if (top['issuers'] !== undefined) {
    issuers = Object.create(null) as Record<string, TrustedIssuer>;
    for (const [iss, given] of Object.entries(object(top['issuers'], '$.issuers', undefined))) {
      const path = key('$.issuers', iss);
      const checked = entry(given, path, ISSUER_FIELDS);
      // The issuer URL is where discovery looks, unless the keys are named otherwise.
      if (checked.jwksUrl === undefined && checked.jwksFile === undefined && httpUrl(iss, path) === undefined)
        throw new PolicyProblem(path, 'names no keys');
      issuers[iss] = checked;
    }
  }
  if (self === undefined && (issuers === undefined || Object.keys(issuers).length === 0))
    throw new PolicyProblem('$', 'names no issuer: give self, issuers, or both');
  const algorithm = top['algorithm'];
  if (algorithm !== undefined && !isAlgorithm(algorithm))
    throw new PolicyProblem('$.algorithm', `is not an algorithm jwt-grpc signs with, got ${JSON.stringify(algorithm)}`);
  return {
    ...(self !== undefined && { self }),
    ...(issuers !== undefined && { issuers }),
    ...(algorithm !== undefined && { algorithm: algorithm as string }),
  };
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
    if (!(err instanceof PolicyProblem)) throw err;
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
