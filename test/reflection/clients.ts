/** grpc-js clients of health and reflection, built from the protos in proto/. */
import { Client, type ClientDuplexStream, type ClientReadableStream, type ServiceError, credentials } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { LOADER_OPTIONS, clientConstructor, unary } from '../../bench/kit/grpc-clients.js';
import { HEALTH_PROTO, REFLECTION_PROTOS } from '../../bench/kit/grpc-extras.js';

/** ServerReflectionResponse as proto-loader decodes it. */
export interface ReflectionResponse {
  valid_host: string;
  original_request: Record<string, unknown> | null;
  message_response: 'file_descriptor_response' | 'all_extension_numbers_response' | 'list_services_response' | 'error_response';
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  all_extension_numbers_response?: { base_type_name: string; extension_number: number[] };
  list_services_response?: { service: { name: string }[] };
  error_response?: { error_code: number; error_message: string };
}

/**
 * One ServerReflectionInfo stream: requests are sent as objects (encoded by
 * proto-loader) or as raw bytes; answers are read in order.
 */
export class ReflectionStream {
  readonly #client: Client;
  readonly #call: ClientDuplexStream<unknown, ReflectionResponse>;
  readonly #answers: ReflectionResponse[] = [];
  readonly #waiting: { resolve(response: ReflectionResponse): void; reject(err: Error): void }[] = [];
  #failure: Error | undefined;
  /** Resolves to the call's final status code. */
  readonly status: Promise<number>;

  constructor(address: string, version: 'v1' | 'v1alpha') {
    const file = REFLECTION_PROTOS[version];
    const definition = loadSync(file, LOADER_OPTIONS)[`grpc.reflection.${version}.ServerReflection`] as Record<
      string,
      { path: string; requestSerialize(value: unknown): Buffer; responseDeserialize(bytes: Buffer): ReflectionResponse }
    >;
    const method = definition['ServerReflectionInfo'];
    if (method === undefined) throw new Error(`${file} has no ServerReflectionInfo`);
    this.#client = new Client(address, credentials.createInsecure());
    this.#call = this.#client.makeBidiStreamRequest(
      method.path,
      (value: unknown) => (Buffer.isBuffer(value) ? value : method.requestSerialize(value)),
      (bytes: Buffer) => method.responseDeserialize(bytes),
      { deadline: Date.now() + 20_000 },
    );
    this.#call.on('data', (response: ReflectionResponse) => {
      const waiter = this.#waiting.shift();
      if (waiter === undefined) this.#answers.push(response);
      else waiter.resolve(response);
    });
    this.status = new Promise((resolve) => {
      this.#call.on('status', (status: { code: number }) => resolve(status.code));
    });
    const fail = (err: Error): void => {
      this.#failure = err;
      for (const waiter of this.#waiting.splice(0)) waiter.reject(err);
    };
    this.#call.on('error', (err: ServiceError) => fail(err));
    this.#call.on('end', () => fail(new Error('the stream ended')));
  }

  send(request: Record<string, unknown> | Buffer): void {
    this.#call.write(request);
  }

  /** The next answer, in the order of the requests. */
  next(): Promise<ReflectionResponse> {
    const answer = this.#answers.shift();
    if (answer !== undefined) return Promise.resolve(answer);
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  /** Sends one request and reads its answer. */
  ask(request: Record<string, unknown> | Buffer): Promise<ReflectionResponse> {
    this.send(request);
    return this.next();
  }

  /** Half-closes and resolves to the final status code. */
  async end(): Promise<number> {
    this.#call.end();
    const code = await this.status;
    this.#client.close();
    return code;
  }

  close(): void {
    this.#call.cancel();
    this.#client.close();
  }
}

/** A grpc.health.v1.Health client. */
export function healthClient(address: string): {
  check(service: string): Promise<{ status: string }>;
  list(): Promise<{ statuses: Record<string, { status: string }> }>;
  watch(service: string): ClientReadableStream<{ status: string }>;
  close(): void;
} {
  const Health = clientConstructor(HEALTH_PROTO, 'grpc.health.v1.Health');
  const client = new Health(address, credentials.createInsecure());
  return {
    check: (service) => unary(client, 'Check', { service }),
    list: () => unary(client, 'List', {}),
    watch: (service) =>
      (client as unknown as { Watch(request: unknown, options: { deadline: number }): ClientReadableStream<{ status: string }> }).Watch(
        { service },
        { deadline: Date.now() + 20_000 },
      ),
    close: () => client.close(),
  };
}

/** Messages of a server stream, one by one, as promises. */
export function messages<T>(stream: ClientReadableStream<T>): { next(): Promise<T>; ended: Promise<{ code: number; details: string }> } {
  const queue: T[] = [];
  const waiting: ((value: T) => void)[] = [];
  stream.on('data', (message: T) => {
    const waiter = waiting.shift();
    if (waiter === undefined) queue.push(message);
    else waiter(message);
  });
  const ended = new Promise<{ code: number; details: string }>((resolve) => {
    stream.on('status', (status: { code: number; details: string }) => resolve(status));
  });
  stream.on('error', () => {}); // the status says it; an unhandled 'error' would crash the test
  return {
    next: () => {
      const message = queue.shift();
      if (message !== undefined) return Promise.resolve(message);
      return Promise.race([
        new Promise<T>((resolve) => waiting.push(resolve)),
        ended.then((status) => Promise.reject(new Error(`the stream ended (status ${status.code}: ${status.details}) before a message`))),
      ]);
    },
    ended,
  };
}
