/**
 * The issuers of a trust file, ready to verify (exchange.ts's TokenTrust): this server's own tokens with its own keys
 * (and its revocations), every other issuer with the verifier its consumers use
 * (createRemoteVerifier: degenerate keys refused, the JWK Set fetched with the bounded
 * fetch, cached and refetched on an unknown kid, one clock tolerance). A token is routed by
 * the `iss` it claims, then verified by that issuer's keys, which check that `iss` again.
 */
import { Buffer } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import type { Logger } from '../../base/log.js';
import { type RemoteVerifier, createRemoteVerifier } from '../../protected-service/remote-verifier.js';
import { ANY_AUDIENCE } from '../../tokens/claims.js';
import type { JwtPayload, VerifyResult } from '../../tokens/result.js';
import { type TrustFile, type TrustedIssuer, templatePaths } from '../trust.js';
import { ExchangeRefused } from '../refusal.js';
import type { OwnTokens, TokenRole, TokenTrust, TrustedToken } from '../exchange.js';

/** The `iss` a token claims, read without trust to find its issuer; undefined when it names none or cannot be read. */
function claimedIssuer(token: string): string | undefined {
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  if (first <= 0 || second <= first) return undefined;
  try {
    const payload: unknown = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString('utf8'));
    const iss = (payload as { iss?: unknown } | null)?.iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/** The value at a `/` path of claims, as text; undefined unless a non-empty string or a number. */
function claimText(payload: JwtPayload, path: string): string | undefined {
  let value: unknown = payload;
  for (const part of path.split('/')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** The claim paths of each template seen: a trust file has a few, so this stays as small. */
const TEMPLATE_PATHS = new Map<string, readonly string[]>();

/** The subject a token maps to under `template`; a claim it lacks refuses the token. */
export function mapSubject(template: string, payload: JwtPayload, role: TokenRole): string {
  if (template === '{sub}' && typeof payload.sub === 'string' && payload.sub.length > 0) return payload.sub;
  let paths = TEMPLATE_PATHS.get(template);
  if (paths === undefined) {
    paths = templatePaths(template);
    TEMPLATE_PATHS.set(template, paths);
  }
  let subject = template;
  for (const path of paths) {
    const text = claimText(payload, path);
    if (text === undefined) throw ExchangeRefused.token(role, `has no claim ${path} (a string) for the subject`);
    subject = subject.replace(`{${path}}`, () => text);
  }
  return subject;
}

/** A JwksIssuer reading a JWK Set from a file at each fetch: the remote verifier's cache and refetch rules hold. */
function fileJwks(file: string): { target: string; getJwks(): Promise<{ jwks_json: string }> } {
  return { target: file, getJwks: async () => ({ jwks_json: await readFile(file, 'utf8') }) };
}

/** The remote verifier of one external issuer, from where the trust file says its keys are. */
function remoteVerifier(iss: string, entry: TrustedIssuer, clockToleranceSeconds: number, logger: Logger): RemoteVerifier {
  const source =
    entry.jwksFile !== undefined ? fileJwks(entry.jwksFile) : entry.jwksUrl !== undefined ? { jwksUrl: entry.jwksUrl } : { issuerUrl: iss };
  // The audience is checked against the entry's list below; the issuer by the verifier.
  return createRemoteVerifier(source, { audience: ANY_AUDIENCE, issuer: iss, clockToleranceSeconds, logger });
}

/** The issuers of a trust file, each with its verifier. @internal */
export class TrustedIssuers implements TokenTrust {
  readonly #trust: TrustFile;
  readonly #own: OwnTokens;
  readonly #remote = new Map<string, RemoteVerifier>();
  readonly #logger: Logger;

  constructor(trust: TrustFile, own: OwnTokens, options: { readonly clockToleranceSeconds: number; readonly logger: Logger }) {
    this.#trust = trust;
    this.#own = own;
    this.#logger = options.logger;
    for (const [iss, entry] of Object.entries(trust.issuers ?? {}))
      this.#remote.set(iss, remoteVerifier(iss, entry, options.clockToleranceSeconds, options.logger));
  }

  /**
   * Fetches every external issuer's keys now, so that no exchange waits on the network once
   * warm; an issuer that cannot be reached is logged and tried again at its first token.
   */
  async warm(): Promise<void> {
    await Promise.all(
      [...this.#remote].map(([iss, verifier]) =>
        verifier.refresh().catch((err: unknown) => {
          this.#logger.warn('token exchange: cannot fetch the keys of a trusted issuer yet', {
            issuer: iss,
            error: err instanceof Error ? err.message : String(err),
          });
        }),
      ),
    );
  }

  /** Verifies `token` with the keys of the issuer it names; refuses it (`invalid_request`) when no trusted issuer's keys verify it. */
  async verify(token: string, role: TokenRole): Promise<TrustedToken> {
    // Without external issuers every token must be the server's own: its keys check the `iss`, no peek needed.
    const iss = this.#remote.size === 0 ? this.#own.issuer : claimedIssuer(token);
    const remote = iss === undefined || iss === this.#own.issuer ? undefined : this.#remote.get(iss);
    let result: VerifyResult;
    let entry: Omit<TrustedIssuer, 'jwksUrl' | 'jwksFile'> | undefined;
    if (remote !== undefined) {
      entry = this.#trust.issuers?.[iss as string];
      result = await remote.verify(token);
    } else {
      entry = this.#trust.self;
      if (entry === undefined || iss !== this.#own.issuer)
        throw ExchangeRefused.token(
          role,
          iss === undefined ? 'names no issuer this server trusts' : `issuer ${JSON.stringify(iss)} is not trusted`,
        );
      result = this.#own.verify(token);
    }
    if (!result.valid) throw ExchangeRefused.token(role, `${result.reason}: ${result.message}`);
    const trusted = entry as Omit<TrustedIssuer, 'jwksUrl' | 'jwksFile'>;
    const aud = result.payload.aud;
    const auds = aud === undefined ? [] : typeof aud === 'string' ? [aud] : aud;
    if (!auds.some((one) => trusted.audiences.includes(one)))
      throw ExchangeRefused.token(role, `AUDIENCE_MISMATCH: its aud must name one of ${trusted.audiences.join(', ')}`);
    const subject = mapSubject(trusted.subject ?? '{sub}', result.payload, role);
    return { iss: result.payload.iss, own: remote === undefined, entry: trusted, payload: result.payload, subject };
  }
}
