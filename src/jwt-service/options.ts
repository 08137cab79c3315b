import { invalidOption } from '../base/errors.js';
import type { KeySet } from '../keys/key-set.js';
import type { JwtPolicy } from '../policy/document.js';
import { type Logger, createStderrLogger } from '../base/log.js';
import {
  type DeclaresGroup,
  type Expect,
  type GroupsReading,
  type Label,
  type ResolvedOptions,
  libraryLabel,
  resolveGroups,
} from '../options/resolve.js';
import { OPTIONS } from '../options/table.js';

/**
 * Options of JwtService, shared by {@link addJwtService} and createJwtServer. Defaults
 * and bounds: src/options/table.ts (and the options table of docs/library.md).
 *
 * @example
 * ```ts
 * const options: JwtServiceOptions = { keys: await loadKeys('keys.json'), issuer: 'https://auth.example', defaultTtlSeconds: 600 };
 * ```
 */
export interface JwtServiceOptions {
  /** The keys to sign and verify with (from loadKeys, generateKeys or importKeys); at least one must sign. */
  readonly keys: KeySet;
  /** Subjects handed out round robin when a GenerateJwt request names none. Default: none (requests must name one). */
  readonly subjects?: readonly string[];
  /**
   * Which caller may get which tokens (docs/policy.md): GenerateJwt outside the caller's
   * entry answers PERMISSION_DENIED. Callers are named by their client certificates, so it
   * needs mutual TLS. Default: open: any caller may get any token (`serve` warns of it).
   */
  readonly policy?: JwtPolicy;
  /**
   * Binds every token to the caller's client certificate: `cnf: {"x5t#S256": ...}` (RFC 8705
   * section 3.1), as a policy entry's `bind` does for one caller. A GenerateJwt without a
   * verified client certificate is refused (PERMISSION_DENIED). Default false.
   */
  readonly bindTokens?: boolean;
  /**
   * Put a random `jti` (128 bits, base64url) in every token: the id RevokeJwt names it by
   * (docs/revocation.md). `false` leaves it out, for the benchmark's equal-work comparison;
   * tokens issued under a `policy` carry one all the same (the audit line names it). Default true.
   */
  readonly jti?: boolean;
  /**
   * Verify every token GenerateJwt signs, and check its subject, before answering: a token
   * that does not verify answers INTERNAL (logged). The reference benchmark's work: its peers
   * (bench/peers) verify what they sign, so `npm run bench` runs every row it compares with
   * them in this mode. Off by default: a verify costs about as much as the sign (ES256), and
   * the key checks at load already refuse a key pair that signs what it cannot verify. Default false.
   */
  readonly verifyIssued?: boolean;
  /** `iss` claim put in every token, and checked by VerifyJwt when the request asks. Default: none. */
  readonly issuer?: string;
  /** Lifetime of a token when the request gives no ttl_seconds, 1 s to 10 years. Default 7200, or maxTtlSeconds when lower. */
  readonly defaultTtlSeconds?: number;
  /** Longest lifetime a request may ask for, 1 s to 10 years. Default 86400 (one day). */
  readonly maxTtlSeconds?: number;
  /** Leeway for exp, nbf and iat when verifying, an integer from 0 to 300 seconds. Default 5. */
  readonly clockToleranceSeconds?: number;
  /**
   * How long GenerateJwt waits for a key held by an HSM or a KMS (a `pkcs11` or `kms` key
   * file entry) to sign, queueing included, or to open, before it answers UNAVAILABLE
   * (`key backend unavailable`; the reason, naming the key, is logged); 1 to 60000 ms.
   * Default 2000. Keys in memory never wait. `loadKeys` takes the same option for the
   * opens at start.
   */
  readonly keyBackendTimeoutMs?: number;
  /** Longest token VerifyJwt accepts, 64 to 1048576 characters. Default 8192. */
  readonly maxTokenLength?: number;
  /** Longest subject or audience, 1 to 65536 characters. Default 1024. */
  readonly maxSubjectLength?: number;
  /** Longest claims_json, 2 to 1048576 bytes. Default 4096. */
  readonly maxClaimsJsonBytes?: number;
  /** Cache of verified tokens for VerifyJwt; `false` or `{ maxEntries: 0 }` turns it off. Default `{ maxEntries: 10000 }`. */
  readonly verifyCache?: { readonly maxEntries: number } | false;
  /** Where warnings and errors go. Default: stderr, warnings and errors only. */
  readonly logger?: Logger;
}

// A compile error here: JwtServiceOptions and the option table (src/options/table.ts)
// disagree on the names or types of the service's options.
// biome-ignore lint/correctness/noUnusedVariables: a compile-time check, never read
type ServiceMatchesTable = Expect<DeclaresGroup<Omit<JwtServiceOptions, 'keys'>, 'service'>>;

/** Options after validation, with every default filled in; keys are not among them. @internal */
export interface ResolvedServiceOptions extends Omit<ResolvedOptions<'service'>, 'subjects' | 'logger'> {
  readonly subjects: readonly string[];
  readonly logger: Logger;
}

/** Checks a key set can serve: a KeySet with at least one signing key. @internal */
export function checkServiceKeys(keys: unknown): KeySet {
  return OPTIONS.keys.kind.check(keys, 'keys');
}

/**
 * The service's options, read in one pass through the option table (unknown names refused,
 * each option checked, defaults filled in: {@link resolveGroups}), then its rules across
 * options ({@link serviceRules}); errors name an option as `reading.label` gives it (the CLI
 * passes its flags). Keys are checked where they are given ({@link checkServiceKeys}). @internal
 */
export function resolveServiceOptions(options: Omit<JwtServiceOptions, 'keys'>, reading: GroupsReading = {}): ResolvedServiceOptions {
  const { service } = resolveGroups(['service'], options, reading);
  return serviceRules(service, options, reading.label);
}

/**
 * The rules across the service's options, on what the table resolved: no subject handed out
 * is longer than maxSubjectLength, and the default lifetime is at most maxTtlSeconds
 * (lowered to it when not given). `given` tells a default lifetime given from the table's. @internal
 */
export function serviceRules(
  resolved: ResolvedOptions<'service'>,
  given: Pick<JwtServiceOptions, 'defaultTtlSeconds'>,
  label: Label = libraryLabel,
): ResolvedServiceOptions {
  const { maxSubjectLength, maxTtlSeconds } = resolved;
  const subjects = resolved.subjects ?? [];
  subjects.forEach((subject, index) => {
    if (subject.length > maxSubjectLength) {
      throw invalidOption(label('subjects'), `entry ${index} is longer than ${label('maxSubjectLength')} (${maxSubjectLength} characters)`);
    }
  });
  // The default lifetime yields to a lower maxTtlSeconds; a lifetime given may not exceed it.
  const defaultTtlSeconds =
    given.defaultTtlSeconds == null ? Math.min(resolved.defaultTtlSeconds, maxTtlSeconds) : resolved.defaultTtlSeconds;
  if (defaultTtlSeconds > maxTtlSeconds) {
    throw invalidOption(
      label('defaultTtlSeconds'),
      `must be at most ${label('maxTtlSeconds')} (${maxTtlSeconds}), got ${defaultTtlSeconds}`,
    );
  }
  return { ...resolved, subjects, defaultTtlSeconds, logger: resolved.logger ?? createStderrLogger() };
}
