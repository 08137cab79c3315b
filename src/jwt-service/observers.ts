/**
 * The observers around JwtService's core (observer.ts): the audit log, the metrics, the
 * tracing spans. Each is a few hooks; prepareJwtService composes those a server has.
 */
import type { Span } from '@opentelemetry/api';
import { JwtGrpcError } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import type { PolicyDecision, ServiceObserver } from '../metrics/jwt-service-metrics.js';
import { PolicyDenied, RateLimited } from '../policy/enforce.js';
import type { StatusClaim } from '../revocation/status-list/issuer.js';
import { GrpcStatus } from '../contracts/handler-api.js';
import { AuditSummary } from './audit-summary.js';
import { callerMessage, statusOf } from './handlers.js';
import type { CoreObserver, ExchangeEvent, RefusedEvent, RevokeEvent } from './observer.js';
import { ExchangeRefused } from '../exchange/refusal.js';

/**
 * The audit log: one line per GenerateJwt under a policy (the caller, what it asked for,
 * what was signed; never the token), refusals as warnings, at most one a second per
 * (caller, decision, rule) and then a count of those left out (./audit-summary.ts); one per RevokeJwt (who, the jti,
 * until when, the reason; never a token or the secret); a key backend that failed; a policy replaced.
 * `maxSubjectLength` bounds what a refusal quotes of the caller's text. @internal
 */
export function auditObserver(logger: Logger, maxSubjectLength: number): CoreObserver<unknown> {
  const summary = new AuditSummary(logger);
  return {
    onIssued({ request, granted, sub, exp, kid, claims, nowSeconds }) {
      if (granted === undefined) return;
      const status = claims['status'] as StatusClaim | undefined;
      summary.write('info', 'policy: token issued', {
        audit: 'issue',
        decision: 'allow',
        rule: 'none',
        caller: granted.callerId,
        sub,
        aud: request.audience,
        alg: request.algorithm,
        kid,
        jti: claims['jti'],
        ttl: exp - nowSeconds,
        bound: 'cnf' in claims,
        // The status list index, when there is one: what revoking this token sets.
        ...(status !== undefined && { statusIdx: status.status_list.idx }),
      });
    },
    onRefused({ request, error, underPolicy, granted }) {
      // A key held by an HSM or a KMS that could not sign: said whether or not a policy is in use.
      if (error instanceof JwtGrpcError && error.code === 'ERR_KEY_BACKEND_UNAVAILABLE') logger.warn(error.message);
      if (!underPolicy) return;
      const { decision, rule } = refusalOf(error);
      const max = maxSubjectLength;
      summary.write('warn', 'policy: token refused', {
        audit: 'refuse',
        decision,
        rule,
        caller: error instanceof PolicyDenied || error instanceof RateLimited ? (error.callerId ?? null) : (granted?.callerId ?? null),
        sub: clip(granted?.request.subject ?? request.subject, max),
        aud: clip(request.audience, max),
        alg: clip(request.algorithm, max),
        ttl: granted?.request.ttl_seconds ?? request.ttl_seconds,
        reason: callerMessage(error) ?? 'internal error',
      });
    },
    onRevoke: (event) => auditRevoke(logger, event),
    onPolicyReplaced(policy) {
      logger.info('issuance policy replaced', { callers: Object.keys(policy.callers).length });
    },
    onExchange: (event) => auditExchange(summary, event, maxSubjectLength),
  };
}

/** The audit line of a RevokeJwt: who revoked which jti until when, or who was refused; never a token or the secret. */
function auditRevoke(logger: Logger, event: RevokeEvent): void {
  switch (event.outcome) {
    case 'denied':
    case 'unauthenticated':
      logger.warn('revocation: refused', {
        audit: 'revoke',
        decision: 'deny',
        caller: event.caller?.id ?? null,
        reason: (event.error as Error).message,
      });
      return;
    case 'unavailable':
      logger.error('revocation: the store refused it; nothing was revoked', {
        audit: 'revoke',
        jti: event.revocation.jti,
        error: (event.error as Error).message,
      });
      return;
    case 'revoked':
    case 'already': {
      const { by, revocation, expiresAt } = event;
      logger.info('revocation: token revoked', {
        audit: 'revoke',
        decision: 'allow',
        by,
        jti: revocation.jti,
        expiresAt,
        reason: revocation.reason ?? null,
        already: event.outcome === 'already',
      });
      return;
    }
    case 'invalid':
      return;
  }
}

/**
 * One audit line per token exchange: who acted, for which subject (as mapped) of which
 * issuer, the audiences, scope, lifetime and jti of the token issued; a refusal as a
 * warning naming its rule and reason. Never a token.
 */
function auditExchange(summary: AuditSummary, event: ExchangeEvent, max: number): void {
  if (event.outcome === 'issued') {
    const { decision, alg, kid } = event;
    summary.write('info', 'exchange: token issued', {
      audit: 'exchange',
      decision: 'allow',
      rule: 'none',
      caller: event.caller?.id ?? null,
      actor: decision.actor ?? null,
      sub: decision.sub,
      subjectIssuer: decision.subjectIssuer ?? null,
      aud: decision.targets.join(' '),
      scope: decision.scope,
      alg,
      kid,
      jti: decision.claims['jti'],
      ttl: decision.ttl,
    });
    return;
  }
  const { decision, rule } = exchangeRefusalOf(event.error);
  summary.write('warn', 'exchange: token refused', {
    audit: 'exchange',
    decision,
    rule,
    caller: event.caller?.id ?? null,
    aud: clip([event.request.audience, event.request.resource].filter((one) => one !== '').join(' '), max),
    scope: clip(event.request.scope, max),
    reason: callerMessage(event.error) ?? 'internal error',
  });
}

/** How a token exchange that failed is audited and counted: its refusal's rule (`deny`), or a failure of the server (`error`). @internal */
export function exchangeRefusalOf(err: unknown): { decision: PolicyDecision; rule: string } {
  if (err instanceof ExchangeRefused) return { decision: 'deny', rule: err.rule };
  if (err instanceof RateLimited) return { decision: 'deny', rule: 'rate' };
  if (statusOf(err) === GrpcStatus.UNAVAILABLE) return { decision: 'error', rule: 'unavailable' };
  return { decision: 'error', rule: 'internal' };
}

/** The service's counters (ServiceMetrics): tokens issued, VerifyJwt outcomes, policy decisions, RevokeJwt outcomes. @internal */
export function metricsObserver(metrics: ServiceObserver): CoreObserver<unknown> {
  return {
    onIssued({ alg, kid, granted }) {
      metrics.tokenIssued(alg, kid);
      if (granted !== undefined) metrics.policyDecision('allow', 'none');
    },
    onRefused({ error, underPolicy }) {
      if (!underPolicy) return;
      const { decision, rule } = refusalOf(error);
      metrics.policyDecision(decision, rule);
    },
    onVerified: (result) => metrics.verified(result),
    onRevoke: (event) => metrics.revocation(event.outcome),
    onExchange(event) {
      if (event.outcome === 'issued') metrics.exchangeDecision('allow', 'none');
      else {
        const { decision, rule } = exchangeRefusalOf(event.error);
        metrics.exchangeDecision(decision, rule);
      }
    },
  };
}

/**
 * The attributes of the `jwt.sign` and `jwt.verify` spans (the call's scope, when it is
 * traced and sampled): the algorithm and kid, never the token or a claim; an invalid
 * token's header is the caller's text, so only its reason is recorded. @internal
 */
export const spanObserver: CoreObserver<Span> = {
  onIssued({ alg, kid }, span) {
    span?.setAttributes({ 'jwt.alg': alg, 'jwt.kid': kid });
  },
  onVerified(result, span) {
    span?.setAttributes(
      result.valid
        ? { 'jwt.alg': result.alg, 'jwt.kid': result.kid, 'jwt.valid': true }
        : { 'jwt.valid': false, 'jwt.reason': result.reason },
    );
  },
};

/**
 * Request fields whose refusal is counted under its own rule (`request.<field>`); any other
 * is `request`. A fixed set: the metric's label values stay bounded whatever a caller sends.
 */
const REQUEST_FIELDS = new Set(['subject', 'ttl_seconds', 'audience', 'claims_json', 'algorithm', 'claims']);

/**
 * How a GenerateJwt under a policy that failed is audited and counted: a policy rule broken
 * (`deny`, the rule), a bad request field (`deny`, `request.<field>`), or a failure of the
 * server (`error`: `unavailable` when a key backend or the status list cannot serve, `internal` otherwise). @internal
 */
export function refusalOf(err: RefusedEvent['error']): { decision: PolicyDecision; rule: string } {
  if (err instanceof PolicyDenied || err instanceof RateLimited) return { decision: 'deny', rule: err.rule };
  if (err instanceof JwtGrpcError && err.code === 'ERR_INVALID_REQUEST') {
    return { decision: 'deny', rule: err.field !== undefined && REQUEST_FIELDS.has(err.field) ? `request.${err.field}` : 'request' };
  }
  if (statusOf(err) === GrpcStatus.UNAVAILABLE) return { decision: 'error', rule: 'unavailable' };
  return { decision: 'error', rule: 'internal' };
}

/** A caller's text as an audit line quotes it: at most `max` characters (the longest valid subject), so a refused oversized one cannot swell the log. */
function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}... (${text.length} characters)`;
}
