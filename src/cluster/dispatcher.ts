import type { Worker } from 'node:cluster';
import { type Server, type Socket, createServer } from 'node:net';
import type { JwtGrpcError } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import type { HandedPortNumbers, HandedRole, PrimaryMessage } from './messages.js';

/**
 * Connections accepted while no worker serves the port (at start, or while every worker
 * is being replaced) wait for one, up to this many; each past it is closed at once, so a
 * flood during a restart holds a bounded number of descriptors in the primary.
 */
export const MAX_WAITING_CONNECTIONS = 1024;

/** Where a port is bound, and the error when it cannot be (as a single process words it). @internal */
export interface PortAddress {
  readonly host: string;
  readonly port: number;
  readonly refused: (err: NodeJS.ErrnoException) => JwtGrpcError;
}

/**
 * One port of a cluster, held by the primary: it accepts each connection (paused: not a
 * byte is read here) and hands it to the next serving worker, round robin, over IPC.
 *
 * Why not node:cluster's own round robin: it keeps a connection it handed out until the
 * worker answers, and a worker killed before it answered never does: the connection stays
 * open in the primary, accepted and never served, until the client gives up. Here the
 * primary keeps its copy of each connection until the worker says it has it (`adopted`,
 * sent before the worker reads a byte of it). A worker that goes before it said so (the
 * write to its channel failed, the message was still queued behind an earlier handle, or
 * it died with the message unread) has read nothing of it, so the connection goes to the
 * next worker, whole: a client never sees a connection lost to a dying worker, not even
 * one it redialled as the worker died (a dying worker's TCP connections close before its
 * IPC channel does, so such a redial can be written to it).
 *
 * @example
 * ```ts
 * const grpc = await PortDispatcher.bind('grpc', { host: '0.0.0.0', port: 50051, refused: (err) => cannotListen('0.0.0.0:50051', err) }, logger);
 * grpc.add(worker); // once the worker's server takes connections
 * grpc.adopted(worker, id); // its answer to connection `id`
 * grpc.remove(worker); // it exited and its IPC channel closed
 * ```
 * @internal
 */
export class PortDispatcher {
  readonly role: HandedRole;
  readonly port: number;
  readonly #server: Server;
  readonly #logger: Logger;
  /** The workers taking this port's connections, in the order they get them. */
  #serving: Worker[] = [];
  #next = 0;
  /** Per serving worker, by id: the connections sent to it that it has not said it has. */
  readonly #unadopted = new Map<Worker, Map<number, Socket>>();
  #lastId = 0;
  readonly #waiting: Socket[] = [];
  #overflowWarned = false;
  #closed = false;

  private constructor(role: HandedRole, server: Server, port: number, logger: Logger) {
    this.role = role;
    this.#server = server;
    this.port = port;
    this.#logger = logger;
    server.on('connection', (socket: Socket) => this.#dispatch(socket));
    server.on('error', (err) => logger.error(`${role} port error`, { error: err.message }));
  }

  /** Binds `address` (port 0: a free one); rejects with `ERR_LISTEN` naming the option. */
  static async bind(role: HandedRole, address: PortAddress, logger: Logger): Promise<PortDispatcher> {
    const server = createServer({ pauseOnConnect: true });
    const { host, port } = address;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(address.refused(err)));
      server.listen({ host, port }, () => resolve());
    });
    server.removeAllListeners('error');
    const bound = server.address();
    return new PortDispatcher(role, server, typeof bound === 'object' && bound !== null ? bound.port : port, logger);
  }

  /** `worker`'s server takes this port's connections from now on; those waiting go out now. */
  add(worker: Worker): void {
    if (this.#closed || this.#serving.includes(worker)) return;
    this.#serving.push(worker);
    this.#unadopted.set(worker, new Map());
    this.#overflowWarned = false;
    for (const socket of this.#waiting.splice(0)) this.#dispatch(socket);
  }

  /** `worker` has connection `id`: the primary's copy closes (the connection stays open in the worker). */
  adopted(worker: Worker, id: number): void {
    const sent = this.#unadopted.get(worker);
    const socket = sent?.get(id);
    if (socket === undefined) return;
    sent?.delete(id);
    socket.destroy();
  }

  /**
   * `worker` has gone (its process exited and its IPC channel closed): what it had not
   * adopted goes to the others. Not on the exit alone, which can be seen first: once the
   * channel has closed, every `adopted` the worker wrote before it went has been read, so
   * nothing it took is handed on.
   */
  remove(worker: Worker): void {
    this.#retire(worker);
    const unadopted = [...(this.#unadopted.get(worker)?.values() ?? [])];
    this.#unadopted.delete(worker);
    for (const socket of unadopted) this.#dispatch(socket);
  }

  /**
   * Stops accepting at once (new connections are refused) and closes those still waiting.
   * What workers hold is theirs to drain; one still on its way is closed if its worker goes
   * without it. Not node:net's close callback: it waits for every connection this server
   * accepted, and a connection handed over stays counted here while its worker serves it.
   * Once: the primary closes its ports at the first stop and again when the cluster is done
   * (a forced stop reaches only the second).
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const socket of this.#waiting.splice(0)) socket.destroy();
    this.#server.close();
  }

  #dispatch(socket: Socket): void {
    if (this.#closed) return void socket.destroy();
    const worker = this.#pick();
    if (worker === undefined) return this.#wait(socket);
    const sent = this.#unadopted.get(worker) as Map<number, Socket>;
    const id = ++this.#lastId;
    sent.set(id, socket);
    const message: PrimaryMessage = { type: 'jwt-grpc:connection', port: this.role, id };
    // keepOpen: the primary's copy closes on the worker's `adopted`, not on Node's own acknowledgement.
    worker.send(message, socket, { keepOpen: true }, (err: Error | null) => {
      if (err === null) return;
      // Its channel closed before the write: this one never reached it and goes on now. The
      // worker gets no more; what it may still answer for waits for remove().
      this.#retire(worker);
      if (sent.delete(id)) this.#dispatch(socket);
    });
  }

  /** No more connections to `worker`. */
  #retire(worker: Worker): void {
    const index = this.#serving.indexOf(worker);
    if (index === -1) return;
    this.#serving.splice(index, 1);
    if (this.#next > index) this.#next -= 1;
  }

  #pick(): Worker | undefined {
    if (this.#serving.length === 0) return undefined;
    this.#next %= this.#serving.length;
    const worker = this.#serving[this.#next];
    this.#next += 1;
    return worker;
  }

  #wait(socket: Socket): void {
    if (this.#waiting.length < MAX_WAITING_CONNECTIONS) return void this.#waiting.push(socket);
    socket.destroy();
    if (this.#overflowWarned) return;
    this.#overflowWarned = true;
    this.#logger.warn(`no worker serves the ${this.role} port yet: connections past ${MAX_WAITING_CONNECTIONS} waiting are closed`, {
      port: this.port,
    });
  }
}

/** The ports a cluster's workers serve: gRPC, and discovery with the `httpPort` option. @internal */
export class ClusterPortSet {
  readonly grpc: PortDispatcher;
  readonly discovery: PortDispatcher | undefined;

  private constructor(grpc: PortDispatcher, discovery: PortDispatcher | undefined) {
    this.grpc = grpc;
    this.discovery = discovery;
  }

  /** Binds both; when the second cannot be bound, the first is closed again. */
  static async bind(grpc: PortAddress, discovery: PortAddress | undefined, logger: Logger): Promise<ClusterPortSet> {
    const grpcPort = await PortDispatcher.bind('grpc', grpc, logger);
    if (discovery === undefined) return new ClusterPortSet(grpcPort, undefined);
    try {
      return new ClusterPortSet(grpcPort, await PortDispatcher.bind('discovery', discovery, logger));
    } catch (err) {
      grpcPort.close();
      throw err;
    }
  }

  /** The port numbers, for the workers' start message. */
  get numbers(): HandedPortNumbers {
    return { grpc: this.grpc.port, ...(this.discovery !== undefined && { discovery: this.discovery.port }) };
  }

  add(worker: Worker): void {
    this.grpc.add(worker);
    this.discovery?.add(worker);
  }

  remove(worker: Worker): void {
    this.grpc.remove(worker);
    this.discovery?.remove(worker);
  }

  /** A worker's `adopted`, to the port it names. */
  adopted(worker: Worker, message: { readonly port: HandedRole; readonly id: number }): void {
    (message.port === 'grpc' ? this.grpc : this.discovery)?.adopted(worker, message.id);
  }

  close(): void {
    this.grpc.close();
    this.discovery?.close();
  }
}
