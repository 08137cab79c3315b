/**
 * The one decision on a call's token, for every server jwtAuthInterceptor protects:
 * createJwtServer on either transport and a grpc-js Server of one's own. Each transport
 * reads the facts of its call and carries out the verdict, in an adapter of a few lines
 * (auth-interceptor.ts); what the verdict is never depends on the transport.
 *
 * The steps, in order, the first refusal ending the call:
 * 1. authenticate: exactly one `Bearer <jwt>`, verified by the verifier (a remote one
 *    fetches keys and checks a status list here): UNAUTHENTICATED, or the verifier's status;
 * 2. the token's binding to the connection's client certificate (RFC 8705): UNAUTHENTICATED;
 * 3. authorize: the method rules, then the hook: PERMISSION_DENIED, or the hook's status.
 *
 * Fails closed: a verifier or hook that throws, rejects, or answers a status that is no
 * error (OK, or no gRPC code at all) gives a refusal, never an admission; the promise a
 * decision returns never rejects.
 */
import type { JwtPayload } from '../tokens/result.js';
import { GrpcStatus, GrpcStatusError, type StatusCode, isThenable } from '../contracts/handler-api.js';
import { type AuthOutcome, type Authenticator, failedStep } from './authenticate.js';
import type { AuthorizeCall, Authorizer } from './authorize.js';
import { bindingProblem } from './bound-token.js';

/**
 * The decision's verdict: the call goes on with the token's claims, or ends with a status
 * (never OK) and details saying why.
 *
 * @example
 * ```ts
 * const refused: Verdict = { status: GrpcStatus.UNAUTHENTICATED, details: 'missing token' };
 * ```
 */
export type Verdict = AuthOutcome;

/** What decides, validated once when the interceptor is made. @internal */
export interface CallPolicy {
  readonly authenticator: Authenticator;
  /** Undefined when there is nothing to authorize. */
  readonly authorizer: Authorizer | undefined;
}

/** A span around step 1, where the server traces the call. @internal */
export interface DecisionTrace {
  /** Runs the verifier in the span's context. */
  run<T>(verify: () => T): T;
  /** Ends the span with step 1's outcome. */
  end(outcome: AuthOutcome): void;
}

/** The facts of one call, as its transport's adapter reads them. @internal */
export interface CallFacts {
  /** The values of the policy's metadata key. */
  readonly tokens: readonly unknown[];
  /** The thumbprint of the client certificate TLS verified, read only for a bound token. */
  readonly thumbprint: () => string | undefined;
  /** What the authorize hook sees. */
  readonly call: AuthorizeCall;
  readonly trace?: DecisionTrace | undefined;
}

/** A refusal as it ends a call on createJwtServer: a GrpcStatusError. @internal */
export function refusalError(verdict: { readonly status: StatusCode; readonly details: string }): GrpcStatusError {
  return new GrpcStatusError(verdict.status, verdict.details);
}

const AUTHORIZATION_FAILED = 'authorization failed';

/** Step 3: the method rules and the hook, a throw or rejection of the hook refused like one of a verifier. */
function authorize(authorizer: Authorizer, claims: JwtPayload, call: AuthorizeCall): Verdict | Promise<Verdict> {
  const toVerdict = (refusal: GrpcStatusError | undefined): Verdict =>
    refusal === undefined ? { claims } : failedStep(refusal, AUTHORIZATION_FAILED);
  let answer: ReturnType<Authorizer>;
  try {
    answer = authorizer(claims, call);
  } catch (err) {
    return failedStep(err, AUTHORIZATION_FAILED);
  }
  if (!isThenable(answer)) return toVerdict(answer);
  return Promise.resolve(answer).then(toVerdict, (err: unknown) => failedStep(err, AUTHORIZATION_FAILED));
}

/** Step 2 for a bound token: the certificate is read only then (a hash per call otherwise saved); one that cannot be read refuses. */
function boundProblem(claims: JwtPayload, facts: CallFacts): string | undefined {
  let thumbprint: string | undefined;
  try {
    thumbprint = facts.thumbprint();
  } catch {
    return "the token is bound to a client certificate and the connection's could not be read";
  }
  return bindingProblem(claims, thumbprint);
}

/** Steps 2 and 3, on a token that authenticated. */
function afterAuthentication(policy: CallPolicy, facts: CallFacts, outcome: AuthOutcome): Verdict | Promise<Verdict> {
  facts.trace?.end(outcome);
  if (!('claims' in outcome)) return outcome;
  const unbound = (outcome.claims as { cnf?: unknown }).cnf === undefined ? undefined : boundProblem(outcome.claims, facts);
  if (unbound !== undefined) return { status: GrpcStatus.UNAUTHENTICATED, details: unbound };
  return policy.authorizer === undefined ? outcome : authorize(policy.authorizer, outcome.claims, facts.call);
}

/**
 * Decides one call: synchronously when the verifier and the hook answer synchronously (a
 * local verifier's valid token costs no promise), else a promise that never rejects.
 *
 * @example
 * ```ts
 * // hidden: declare const policy: CallPolicy;
 * // hidden: declare const call: CallContext;
 * const verdict = decide(policy, { tokens: call.metadata.getAll('authorization'), thumbprint: () => call.caller?.thumbprint, call });
 * ```
 * @internal
 */
export function decide(policy: CallPolicy, facts: CallFacts): Verdict | Promise<Verdict> {
  const { authenticator } = policy;
  const trace = facts.trace;
  const outcome =
    trace === undefined ? authenticator.authenticate(facts.tokens) : trace.run(() => authenticator.authenticate(facts.tokens));
  if (!isThenable(outcome)) return afterAuthentication(policy, facts, outcome);
  return Promise.resolve(outcome).then((authenticated) => afterAuthentication(policy, facts, authenticated));
}
