/**
 * grpc.health.v1.Health (proto/grpc/health/v1/health.proto) as a transport-neutral
 * service: Check, List and Watch over a small store of serving statuses, with the
 * semantics of the gRPC health checking protocol
 * (https://github.com/grpc/grpc/blob/master/doc/health-checking.md).
 */
import { JwtGrpcError, invalidOption } from '../base/errors.js';
import {
  type CallContext,
  GrpcStatusError,
  type ResponseStream,
  GrpcStatus,
  type ServedService,
  type ServiceImplementation,
} from '../contracts/handler-api.js';
import { lazyProtoService, loadProtoService } from '../protos/load.js';

/** Fully qualified name of the health service. */
export const HEALTH_SERVICE_NAME = 'grpc.health.v1.Health';

/** The statuses a service can be set to. `SERVICE_UNKNOWN` is Watch's answer for a service never set. */
export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING';

/** List answers RESOURCE_EXHAUSTED beyond this many services, as the health protocol says. */
export const HEALTH_LIST_LIMIT = 100;

const SERVING_STATUSES: ReadonlySet<string> = new Set<ServingStatus>(['UNKNOWN', 'SERVING', 'NOT_SERVING']);

type WatchStatus = ServingStatus | 'SERVICE_UNKNOWN';

/** Messages as proto-loader decodes them (field names as in the proto, enums as names). */
interface HealthCheckRequest {
  service: string;
}
interface HealthCheckResponse {
  status: WatchStatus;
}
interface HealthListResponse {
  statuses: Record<string, HealthCheckResponse>;
}

/** The health service, and the store of statuses it answers from. */
export interface HealthService extends ServedService {
  /** Sets the status of `service` ('' is the server as a whole); every Watch of it is sent the change. */
  setStatus(service: string, status: ServingStatus): void;
  /** The status of `service`, or undefined when it was never set. */
  getStatus(service: string): ServingStatus | undefined;
  /** How many Watch calls are running (each holds one listener until it ends). */
  readonly watchCount: number;
  /**
   * Ends every Watch call (after sending it the latest status) and those started later,
   * for a server that is closing: a Watch otherwise lasts as long as its client wants,
   * and would hold a graceful shutdown until its deadline.
   */
  close(): void;
}

/**
 * Creates grpc.health.v1.Health with these initial statuses. Check answers NOT_FOUND for
 * a service never set; Watch sends the current status at once, then each change
 * (SERVICE_UNKNOWN while the service is unknown), until the call is cancelled or
 * `close()` is called. Throws `JwtGrpcError` (`ERR_INVALID_OPTION`) for a status that
 * is not a {@link ServingStatus}.
 *
 * @example
 * ```ts
 * const health = createHealthService({ '': 'NOT_SERVING' });
 * // serve health.definition / health.implementation on a transport, then, once listening:
 * health.setStatus('', 'SERVING');
 * ```
 */
export function createHealthService(initial: Readonly<Record<string, ServingStatus>> = {}): HealthService {
  return new Health(initial);
}

/** The store of statuses and the Watch calls waiting on it. */
class Health implements HealthService {
  readonly name = HEALTH_SERVICE_NAME;
  readonly definition = healthDefinition();
  readonly implementation: ServiceImplementation;
  readonly #statuses = new Map<string, ServingStatus>();
  /** Wake-up functions of the running Watch calls, by service. */
  readonly #watchers = new Map<string, Set<() => void>>();
  /** Set by close: a Watch ends once it has sent the latest status. */
  #closed = false;

  constructor(initial: Readonly<Record<string, ServingStatus>>) {
    for (const [service, status] of Object.entries(initial))
      this.#statuses.set(service, checkedStatus(status, `statuses[${JSON.stringify(service)}]`));
    this.implementation = {
      Check: (request: HealthCheckRequest) => this.#check(request),
      List: () => this.#list(),
      Watch: (request: HealthCheckRequest, responses: ResponseStream<HealthCheckResponse>, call: CallContext) =>
        this.#watch(request, responses, call),
    };
  }

  setStatus(service: string, status: ServingStatus): void {
    if (typeof service !== 'string')
      throw new JwtGrpcError('ERR_INVALID_OPTION', 'setStatus: service must be a string', { field: 'service' });
    this.#statuses.set(service, checkedStatus(status, 'status'));
    this.#wakeAll(service);
  }

  getStatus(service: string): ServingStatus | undefined {
    return this.#statuses.get(service);
  }

  get watchCount(): number {
    let count = 0;
    for (const set of this.#watchers.values()) count += set.size;
    return count;
  }

  close(): void {
    this.#closed = true;
    for (const service of this.#watchers.keys()) this.#wakeAll(service);
  }

  #check(request: HealthCheckRequest): HealthCheckResponse {
    const status = this.#statuses.get(request.service);
    if (status === undefined) throw new GrpcStatusError(GrpcStatus.NOT_FOUND, `unknown service ${JSON.stringify(request.service)}`);
    return { status };
  }

  #list(): HealthListResponse {
    if (this.#statuses.size > HEALTH_LIST_LIMIT) {
      throw new GrpcStatusError(
        GrpcStatus.RESOURCE_EXHAUSTED,
        `${this.#statuses.size} services, more than List answers (${HEALTH_LIST_LIMIT})`,
      );
    }
    return { statuses: Object.fromEntries([...this.#statuses].map(([service, status]) => [service, { status }])) };
  }

  /** Sends the status of the service now, then each change, until the call is cancelled or close is called. */
  async #watch(request: HealthCheckRequest, responses: ResponseStream<HealthCheckResponse>, call: CallContext): Promise<void> {
    const waker = new Waker();
    const unwatch = this.#addWatcher(request.service, waker.wake);
    // A write waits for the client to read (flow control); a cancelled call must not wait.
    const aborted = new Promise<void>((resolve) => {
      const onAbort = (): void => {
        resolve();
        waker.wake();
      };
      call.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await this.#sendChanges(request.service, responses, call.signal, aborted, waker);
    } finally {
      unwatch();
    }
  }

  async #sendChanges(
    service: string,
    responses: ResponseStream<HealthCheckResponse>,
    signal: AbortSignal,
    aborted: Promise<void>,
    waker: Waker,
  ): Promise<void> {
    let sent: WatchStatus | undefined;
    while (!signal.aborted) {
      // Read the store each time round: changes made during a write collapse into the
      // latest, so a slow reader gets the current status, not a backlog.
      const current: WatchStatus = this.#statuses.get(service) ?? 'SERVICE_UNKNOWN';
      if (current !== sent) {
        sent = current;
        await Promise.race([responses.write({ status: current }), aborted]);
      } else if (this.#closed) {
        return;
      } else {
        await waker.next();
      }
    }
  }

  /** Adds a Watch's wake-up for `service`; returns its removal. */
  #addWatcher(service: string, wake: () => void): () => void {
    let set = this.#watchers.get(service);
    if (set === undefined) this.#watchers.set(service, (set = new Set()));
    const watching = set.add(wake);
    return () => {
      watching.delete(wake);
      if (watching.size === 0 && this.#watchers.get(service) === watching) this.#watchers.delete(service);
    };
  }

  #wakeAll(service: string): void {
    for (const wake of this.#watchers.get(service) ?? []) wake();
  }
}

/**
 * One Watch call's wait for something to send: a change of status, close, or the call's
 * end. A wake while not waiting is a no-op (the loop reads the store next anyway).
 */
class Waker {
  #resolve = (): void => {};
  readonly wake = (): void => this.#resolve();

  next(): Promise<void> {
    return new Promise<void>((resolve) => (this.#resolve = resolve));
  }
}

function checkedStatus(status: unknown, field: string): ServingStatus {
  if (typeof status !== 'string' || !SERVING_STATUSES.has(status)) {
    throw invalidOption(field, `must be one of ${[...SERVING_STATUSES].join(', ')}, got ${JSON.stringify(status)}`);
  }
  return status as ServingStatus;
}

let definition: ServedService['definition'] | undefined;

/** Health's methods, as proto/grpc/health/v1/health.proto defines them (a test holds the two together). @internal */
export const HEALTH_METHOD_SHAPES = {
  // Only reads a serving status (grpc's health.proto has no idempotency option; Check reads as GetJwks does): Connect may GET it.
  Check: { requestStream: false, responseStream: false, noSideEffects: true },
  List: { requestStream: false, responseStream: false },
  Watch: { requestStream: false, responseStream: true },
} as const;

/** Health's methods, once per process; their codecs load with the first health call. */
function healthDefinition(): ServedService['definition'] {
  definition ??= lazyProtoService(HEALTH_SERVICE_NAME, HEALTH_METHOD_SHAPES, () =>
    loadProtoService('grpc/health/v1/health.proto', HEALTH_SERVICE_NAME),
  );
  return definition;
}
