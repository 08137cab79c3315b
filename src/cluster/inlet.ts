import { Socket } from 'node:net';
import type { HandedPort, HandedPorts } from '../base/handed-port.js';
import type { Logger } from '../base/log.js';
import type { HandedPortNumbers, HandedRole, PrimaryMessageOf, WorkerMessage } from './messages.js';

type ConnectionMessage = PrimaryMessageOf<'jwt-grpc:connection'>;

/**
 * A worker's end of the ports its primary holds (./dispatcher.ts): each connection the
 * primary hands over goes to the server of its port. One that no server takes (none made
 * for that port, or it has closed) is closed, never left open.
 *
 * @example
 * ```ts
 * const inlet = new ConnectionInlet(start.ports, send, logger);
 * const server = createWorkerJwtServer(options, inlet.ports); // its listen takes the handed connections
 * process.on('message', (message, handle) => message.type === 'jwt-grpc:connection' && inlet.take(message, handle));
 * ```
 * @internal
 */
export class ConnectionInlet {
  /** What a worker's server binds instead of its ports. */
  readonly ports: HandedPorts;
  readonly #logger: Logger;
  readonly #send: (message: WorkerMessage) => void;
  readonly #accepts = new Map<HandedRole, (socket: Socket) => void>();

  constructor(numbers: HandedPortNumbers, send: (message: WorkerMessage) => void, logger: Logger) {
    this.#logger = logger;
    this.#send = send;
    this.ports = {
      grpc: this.#port('grpc', numbers.grpc),
      discovery: numbers.discovery === undefined ? undefined : this.#port('discovery', numbers.discovery),
    };
  }

  /**
   * A connection from the primary, to the server of its port. `adopted` goes back first, in
   * the tick the connection arrived in, before a byte of it is read here: until the primary
   * has it, the connection is the primary's to hand to another worker, whole.
   */
  take(message: ConnectionMessage, handle: unknown): void {
    this.#send({ type: 'jwt-grpc:adopted', port: message.port, id: message.id });
    if (!(handle instanceof Socket)) {
      this.#logger.warn('a connection message from the primary came without its connection', { port: message.port });
      return;
    }
    const accept = this.#accepts.get(message.port);
    if (accept === undefined) return void handle.destroy();
    accept(handle);
  }

  #port(role: HandedRole, port: number): HandedPort {
    return {
      port,
      receive: (accept) => {
        if (accept === undefined) this.#accepts.delete(role);
        else this.#accepts.set(role, accept);
      },
    };
  }
}
