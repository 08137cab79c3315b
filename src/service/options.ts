import { JwtGrpcError, invalidOption } from '../errors.js';
import { KeySet } from '../keys/key-set.js';
import { type Logger, createStderrLogger } from '../log.js';

/** Options of JwtService, shared by {@link addJwtService} and createJwtServer. */
export interface JwtServiceOptions {
  /** The keys to sign and verify with (from loadKeys, generateKeys or importKeys). */
  readonly keys: KeySet;
  /** Subjects handed out round robin when a GenerateJwt request names none. */
  readonly subjects?: readonly string[];
  /** `iss` claim put in every token, and checked by VerifyJwt when the request asks. */
  readonly issuer?: string;
  /** Lifetime of a token when the request gives no ttl_seconds. Default 7200. */
  readonly defaultTtlSeconds?: number;
  /** Longest lifetime a request may ask for. Default 86400 (one day). */
  readonly maxTtlSeconds?: number;
  /** Leeway for exp, nbf and iat when verifying, 0-300 s. Default 5. */
  readonly clockToleranceSeconds?: number;
  /** Longest token VerifyJwt accepts, in characters. Default 8192. */
  readonly maxTokenLength?: number;
  /** Longest subject or audience, in characters. Default 1024. */
  readonly maxSubjectLength?: number;
  /** Longest claims_json, in bytes. Default 4096. */
  readonly maxClaimsJsonBytes?: number;
  /** Cache of verified tokens for VerifyJwt; `false` turns it off. Default `{ maxEntries: 10000 }`. */
  readonly verifyCache?: { readonly maxEntries: number } | false;
  /** Where warnings and errors go. Default: stderr, warnings and errors only. */
  readonly logger?: Logger;
}

/** Options after validation, with every default filled in. @internal */
export interface ResolvedServiceOptions {
  /** Undefined only for createJwtServer, which generates ephemeral keys when it listens. */
  readonly keys: KeySet | undefined;
  readonly subjects: readonly string[];
  readonly issuer: string | undefined;
  readonly defaultTtlSeconds: number;
  readonly maxTtlSeconds: number;
  readonly clockToleranceSeconds: number;
  readonly maxTokenLength: number;
  readonly maxSubjectLength: number;
  readonly maxClaimsJsonBytes: number;
  readonly verifyCache: { readonly maxEntries: number } | false;
  readonly logger: Logger;
}

function integerOption(name: string, value: unknown, fallback: number, min: number, max: number): number {
  const resolved = value ?? fallback;
  if (typeof resolved !== 'number' || !Number.isInteger(resolved) || resolved < min || resolved > max) {
    throw invalidOption(name, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return resolved;
}

/** Checks a key set can serve: a KeySet with at least one signing key. @internal */
export function checkServiceKeys(keys: unknown): KeySet {
  if (!(keys instanceof KeySet)) throw invalidOption('keys', 'must be a KeySet from loadKeys, generateKeys or importKeys');
  if (keys.signingAlgorithms.length === 0) {
    throw new JwtGrpcError('ERR_INVALID_KEY', 'option keys: no key can sign (all are verify-only)', { field: 'keys' });
  }
  return keys;
}

/**
 * Validates every service option once, at start; errors name the option. `keys` may be
 * absent only when `keysOptional` (createJwtServer's ephemeral keys). @internal
 */
export function resolveServiceOptions(
  options: Omit<JwtServiceOptions, 'keys'> & { readonly keys?: KeySet | undefined },
  keysOptional = false,
): ResolvedServiceOptions {
  if (typeof options !== 'object' || options === null) throw invalidOption('options', 'must be an object');
  const keys = keysOptional && options.keys === undefined ? undefined : checkServiceKeys(options.keys);
  const maxSubjectLength = integerOption('maxSubjectLength', options.maxSubjectLength, 1024, 1, 65_536);
  const subjects = options.subjects ?? [];
  if (!Array.isArray(subjects)) throw invalidOption('subjects', 'must be an array of strings');
  subjects.forEach((subject: unknown, index) => {
    if (typeof subject !== 'string' || subject.length === 0 || subject.length > maxSubjectLength) {
      throw invalidOption('subjects', `entry ${index} must be a string of 1 to ${maxSubjectLength} characters`);
    }
  });
  if (options.issuer !== undefined && (typeof options.issuer !== 'string' || options.issuer.length === 0)) {
    throw invalidOption('issuer', 'must be a non-empty string');
  }
  const maxTtlSeconds = integerOption('maxTtlSeconds', options.maxTtlSeconds, 86_400, 1, 10 * 365 * 86_400);
  const defaultTtlSeconds = integerOption('defaultTtlSeconds', options.defaultTtlSeconds, Math.min(7200, maxTtlSeconds), 1, maxTtlSeconds);
  const cache = options.verifyCache ?? { maxEntries: 10_000 };
  if (cache !== false) integerOption('verifyCache.maxEntries', cache.maxEntries, 10_000, 1, 10_000_000);
  return {
    keys,
    subjects,
    issuer: options.issuer,
    defaultTtlSeconds,
    maxTtlSeconds,
    clockToleranceSeconds: integerOption('clockToleranceSeconds', options.clockToleranceSeconds, 5, 0, 300),
    maxTokenLength: integerOption('maxTokenLength', options.maxTokenLength, 8192, 64, 1 << 20),
    maxSubjectLength,
    maxClaimsJsonBytes: integerOption('maxClaimsJsonBytes', options.maxClaimsJsonBytes, 4096, 2, 1 << 20),
    verifyCache: cache,
    logger: options.logger ?? createStderrLogger(),
  };
}
