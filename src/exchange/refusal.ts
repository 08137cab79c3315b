/**
 * How a token exchange is refused: a JwtGrpcError whose code gives the gRPC status of
 * ExchangeToken, carrying the OAuth error the token endpoint answers (RFC 8693 section
 * 2.2.2, RFC 6749 section 5.2) and the rule the audit line and the metric name.
 */
import { JwtGrpcError, type JwtGrpcErrorCode } from '../base/errors.js';
import type { IssuanceRate } from '../policy/document.js';

/** The OAuth errors of a refused exchange (RFC 8693 section 2.2.2). */
export type ExchangeOAuthError = 'invalid_request' | 'invalid_target' | 'invalid_scope';

/**
 * What a refusal is counted and audited under: a bad request field (`request.<field>`), a
 * token that did not verify or is not trusted (`subject_token`, `actor_token`), the
 * subject's `may_act`, the policy (`policy`, `audiences`, `scopes`, `rate`), or a lifetime left too
 * short (`lifetime`). A fixed set: the metric's labels stay bounded.
 */
export type ExchangeRefusalRule =
  | `request.${string}`
  | 'subject_token'
  | 'actor_token'
  | 'may_act'
  | 'policy'
  | 'audiences'
  | 'scopes'
  | 'lifetime'
  | 'rate';

/** A refused exchange. @internal */
export class ExchangeRefused extends JwtGrpcError {
  constructor(
    code: Extract<JwtGrpcErrorCode, 'ERR_INVALID_REQUEST' | 'ERR_UNAUTHENTICATED' | 'ERR_PERMISSION_DENIED' | 'ERR_RATE_LIMITED'>,
    readonly oauthError: ExchangeOAuthError,
    readonly rule: ExchangeRefusalRule,
    message: string,
  ) {
    super(code, message, rule.startsWith('request.') ? { field: rule.slice('request.'.length) } : undefined);
  }

  /** A malformed request: `field` names the parameter. */
  static request(field: string, problem: string): ExchangeRefused {
    return new ExchangeRefused('ERR_INVALID_REQUEST', 'invalid_request', `request.${field}`, `${field}: ${problem}`);
  }

  /** A subject or actor token that is not valid here (RFC 8693: `invalid_request`; gRPC: UNAUTHENTICATED). */
  static token(role: 'subject_token' | 'actor_token', problem: string): ExchangeRefused {
    return new ExchangeRefused('ERR_UNAUTHENTICATED', 'invalid_request', role, `${role}: ${problem}`);
  }

  /** Refused by the policy or the subject's `may_act` (RFC 8693: `invalid_request`; gRPC: PERMISSION_DENIED). */
  static denied(rule: 'policy' | 'may_act' | 'lifetime', problem: string): ExchangeRefused {
    return new ExchangeRefused('ERR_PERMISSION_DENIED', 'invalid_request', rule, problem);
  }

  /** An audience or resource this server will not issue for. */
  static target(problem: string): ExchangeRefused {
    return new ExchangeRefused('ERR_PERMISSION_DENIED', 'invalid_target', 'audiences', problem);
  }

  /** An exchange over its rule's rate (gRPC: RESOURCE_EXHAUSTED; the token endpoint: 429). */
  static rate(index: number, rate: IssuanceRate): ExchangeRefused {
    return new ExchangeRefused(
      'ERR_RATE_LIMITED',
      'invalid_request',
      'rate',
      `policy rule "rate": exchange rule ${index} is over its rate (${rate.perSecond} tokens/s, burst ${rate.burst}); retry later`,
    );
  }

  /** A scope beyond what the subject token and the policy allow. */
  static scope(problem: string): ExchangeRefused {
    return new ExchangeRefused('ERR_PERMISSION_DENIED', 'invalid_scope', 'scopes', problem);
  }
}
