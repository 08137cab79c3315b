/**
 * What JwtService's core tells the world around it: one hook per outcome, so that audit
 * lines, metrics and spans are observers composed at construction (src/jwt-service/observers.ts),
 * not code inside the core. A hook no observer has costs the core one `undefined` check.
 */
import type { JwtPolicy } from '../policy/document.js';
import type { Granted } from '../policy/enforce.js';
import type { Revocation } from '../contracts/revocation-store.js';
import type { VerifyResult } from '../tokens/result.js';
import type { CallerIdentity } from '../contracts/handler-api.js';
import type { ExchangeTokenRequest, GenerateJwtRequest } from './messages.js';
import type { ExchangeDecision } from '../exchange/exchange.js';

/** A token GenerateJwt signed, as the core knows it once signed (and checked, with `verifyIssued`). @internal */
export interface IssuedEvent {
  readonly request: GenerateJwtRequest;
  readonly alg: string;
  readonly kid: string;
  readonly sub: string;
  readonly exp: number;
  /** The claims signed (the token is never given to observers). */
  readonly claims: Readonly<Record<string, unknown>>;
  /** When the call started, in Unix seconds: `exp - nowSeconds` is the token's lifetime. */
  readonly nowSeconds: number;
  /** Under a policy: what it granted (the caller, the settled request); undefined in open mode. */
  readonly granted: Granted<GenerateJwtRequest> | undefined;
}

/** A GenerateJwt that ended with `error` (thrown on to the transport adapter after the hook). @internal */
export interface RefusedEvent {
  readonly request: GenerateJwtRequest;
  readonly error: unknown;
  /** Whether a policy was in use for the call (refusals are audited and counted only then). */
  readonly underPolicy: boolean;
  /** What the policy granted before the call failed; undefined when it refused, or in open mode. */
  readonly granted: Granted<GenerateJwtRequest> | undefined;
}

/** How a RevokeJwt ended, with what each outcome's audit line names. @internal */
export type RevokeEvent =
  | { readonly outcome: 'denied' | 'unauthenticated'; readonly caller: CallerIdentity | undefined; readonly error: unknown }
  | { readonly outcome: 'invalid'; readonly error: unknown }
  | { readonly outcome: 'unavailable'; readonly revocation: Revocation; readonly error: unknown }
  | { readonly outcome: 'revoked' | 'already'; readonly by: string; readonly revocation: Revocation; readonly expiresAt: number };

/** How a token exchange ended: the token signed (never the token itself), or the error it was refused with. @internal */
export type ExchangeEvent =
  | {
      readonly outcome: 'issued';
      readonly decision: ExchangeDecision;
      readonly alg: string;
      readonly kid: string;
      readonly caller: CallerIdentity | undefined;
    }
  | {
      readonly outcome: 'refused';
      readonly request: ExchangeTokenRequest;
      readonly error: unknown;
      readonly caller: CallerIdentity | undefined;
    };

/**
 * The hooks of the core, each optional. `S` is the call's scope the transport adapter
 * passes through (a tracing span, or nothing): the core never reads it. @internal
 *
 * @example
 * ```ts
 * const counting: CoreObserver = { onIssued: (event) => console.log('signed with', event.kid) };
 * ```
 */
export interface CoreObserver<S = undefined> {
  onIssued?(event: IssuedEvent, scope: S | undefined): void;
  onRefused?(event: RefusedEvent, scope: S | undefined): void;
  /** VerifyJwt's result (never the `verifyIssued` check of a token just signed). */
  onVerified?(result: VerifyResult, scope: S | undefined): void;
  onRevoke?(event: RevokeEvent): void;
  onPolicyReplaced?(policy: JwtPolicy): void;
  onExchange?(event: ExchangeEvent): void;
}

type Hook = keyof CoreObserver;
const HOOKS: readonly Hook[] = ['onIssued', 'onRefused', 'onVerified', 'onRevoke', 'onPolicyReplaced', 'onExchange'];

/**
 * One observer of several, in order; a hook is present only when one of them has it, so
 * the core skips a hook nobody listens to. @internal
 *
 * @example
 * ```ts
 * // hidden: declare const audit: CoreObserver, metrics: CoreObserver;
 * const observer = composeObservers([audit, metrics, undefined]);
 * ```
 */
export function composeObservers<S>(observers: readonly (CoreObserver<S> | undefined)[]): CoreObserver<S> {
  const present = observers.filter((observer): observer is CoreObserver<S> => observer !== undefined);
  const composed: Record<string, (...args: never[]) => void> = {};
  for (const hook of HOOKS) {
    const calls = present
      .filter((observer) => observer[hook] !== undefined)
      .map((observer) => (observer[hook] as (...args: unknown[]) => void).bind(observer));
    if (calls.length === 1) composed[hook] = calls[0] as (...args: never[]) => void;
    else if (calls.length > 1) composed[hook] = (...args: never[]) => calls.forEach((call) => call(...args));
  }
  return composed as CoreObserver<S>;
}
