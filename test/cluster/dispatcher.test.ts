/**
 * The primary's hand-off of a port's connections (src/cluster/dispatcher.ts), on real
 * sockets with stand-in workers: each connection goes to the next serving worker; the
 * primary's copy closes only when the worker has said it has it; a connection a worker
 * never took (the write failed, or it went before adopting) goes to the next worker whole,
 * bytes the client sent included; none is left open when no worker can take it.
 */
import type { Worker } from 'node:cluster';
import { EventEmitter } from 'node:events';
import { type Server, type Socket, connect, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PortDispatcher } from '../../src/cluster/dispatcher.js';
import { silentLogger } from '../../src/base/log.js';
import { cannotListen } from '../../src/base/address.js';
import { cannotServe } from '../../src/base/http-listen.js';
import { waitUntil } from '../../bench/kit/wait.js';

/** One connection as a stand-in worker got it: the message, the primary's socket, and the send's callback. */
interface Handed {
  readonly message: { type: string; port: string; id: number };
  readonly socket: Socket;
  readonly callback: (err: Error | null) => void;
}

/** A worker that records what the primary sends it and lets the test decide what the write did. */
class HandOffWorker extends EventEmitter {
  readonly handed: Handed[] = [];
  readonly process = { pid: 0 };

  send(message: Handed['message'], socket: Socket, _options: unknown, callback: Handed['callback']): boolean {
    this.handed.push({ message, socket, callback });
    return true;
  }

  get asWorker(): Worker {
    return this as unknown as Worker;
  }
}

const opened: { dispatchers: PortDispatcher[]; clients: Socket[]; servers: Server[] } = { dispatchers: [], clients: [], servers: [] };
afterEach(async () => {
  for (const client of opened.clients.splice(0)) client.destroy();
  for (const dispatcher of opened.dispatchers.splice(0)) dispatcher.close();
  await Promise.all(opened.servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function dispatcher(): Promise<PortDispatcher> {
  const bound = await PortDispatcher.bind(
    'grpc',
    { host: '127.0.0.1', port: 0, refused: (err) => cannotListen('127.0.0.1:0', err) },
    silentLogger,
  );
  opened.dispatchers.push(bound);
  return bound;
}

/** A bound dispatcher with two stand-in workers serving, in this order. */
async function twoWorkers(): Promise<{ port: PortDispatcher; workers: [HandOffWorker, HandOffWorker] }> {
  const port = await dispatcher();
  const workers: [HandOffWorker, HandOffWorker] = [new HandOffWorker(), new HandOffWorker()];
  for (const worker of workers) port.add(worker.asWorker);
  return { port, workers };
}

/** A client connection to `port` that has sent `hello`, and what comes back to it. */
async function client(port: number, hello = 'hello'): Promise<{ socket: Socket; closed: () => boolean }> {
  const socket = connect(port, '127.0.0.1');
  opened.clients.push(socket);
  let closed = false;
  socket.on('close', () => (closed = true));
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(hello);
  return { socket, closed: () => closed };
}

/** What the client sent, read from the socket the primary handed over (as the worker's copy would read it). */
function readFrom(socket: Socket, bytes: number): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.length >= bytes) resolve(text);
    });
    socket.resume();
  });
}

describe('PortDispatcher', () => {
  it('hands connections to the serving workers in turn, each with an id', async () => {
    const {
      port,
      workers: [a, b],
    } = await twoWorkers();
    for (let i = 0; i < 4; i++) await client(port.port);
    await waitUntil(() => a.handed.length + b.handed.length === 4, 2000, 5);
    expect(a.handed.map((h) => h.message.type)).toEqual(['jwt-grpc:connection', 'jwt-grpc:connection']);
    expect(b.handed).toHaveLength(2);
    const ids = [...a.handed, ...b.handed].map((h) => h.message.id);
    expect(new Set(ids).size).toBe(4);
    expect(a.handed[0]?.message.port).toBe('grpc');
  });

  it("keeps its copy open until the worker's adopted, then closes it (the client's connection is the worker's)", async () => {
    const port = await dispatcher();
    const worker = new HandOffWorker();
    port.add(worker.asWorker);
    await client(port.port);
    await waitUntil(() => worker.handed.length === 1, 2000, 5);
    const [handed] = worker.handed as [Handed];
    handed.callback(null);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(handed.socket.destroyed, 'closed on the write alone').toBe(false);
    port.adopted(worker.asWorker, handed.message.id);
    expect(handed.socket.destroyed).toBe(true);
  });

  it('hands a connection whose write failed to the next worker, and takes the failed one out of turn', async () => {
    const {
      port,
      workers: [gone, live],
    } = await twoWorkers();
    await client(port.port, 'first bytes');
    await waitUntil(() => gone.handed.length === 1, 2000, 5);
    (gone.handed[0] as Handed).callback(new Error('channel closed'));
    expect(live.handed).toHaveLength(1);
    expect(await readFrom((live.handed[0] as Handed).socket, 11)).toBe('first bytes');
    await client(port.port);
    await waitUntil(() => live.handed.length === 2, 2000, 5);
    expect(gone.handed).toHaveLength(1);
  });

  it("after a failed write, hands on the rest of that worker's connections only when its channel has closed (its adopted may still be unread)", async () => {
    const {
      port,
      workers: [gone, live],
    } = await twoWorkers();
    await client(port.port, 'taken');
    await client(port.port, 'second');
    await client(port.port, 'third');
    await waitUntil(() => gone.handed.length === 2 && live.handed.length === 1, 2000, 5);
    const [taken, failed] = gone.handed as [Handed, Handed];
    taken.callback(null);
    failed.callback(new Error('channel closed'));
    expect(live.handed).toHaveLength(2);
    // The adopted it wrote before it went, read now: that connection is its own.
    port.adopted(gone.asWorker, taken.message.id);
    expect(taken.socket.destroyed).toBe(true);
    port.remove(gone.asWorker);
    expect(live.handed).toHaveLength(2);
  });

  it('hands what a removed worker never adopted to the next worker, whole', async () => {
    const {
      port,
      workers: [dying, live],
    } = await twoWorkers();
    const first = await client(port.port, 'to the dying one');
    await waitUntil(() => dying.handed.length === 1, 2000, 5);
    // Written to its channel, never adopted: it died with the message unread.
    (dying.handed[0] as Handed).callback(null);
    port.remove(dying.asWorker);
    expect(live.handed).toHaveLength(1);
    expect(await readFrom((live.handed[0] as Handed).socket, 16)).toBe('to the dying one');
    expect(first.closed()).toBe(false);
  });

  it('leaves a connection a worker adopted to that worker when it goes', async () => {
    const {
      port,
      workers: [worker, other],
    } = await twoWorkers();
    await client(port.port);
    await waitUntil(() => worker.handed.length === 1, 2000, 5);
    port.adopted(worker.asWorker, (worker.handed[0] as Handed).message.id);
    port.remove(worker.asWorker);
    expect(other.handed).toHaveLength(0);
  });

  it('keeps connections while no worker serves, and hands them out when one does', async () => {
    const port = await dispatcher();
    await client(port.port, 'waited');
    await new Promise((resolve) => setTimeout(resolve, 30));
    const late = new HandOffWorker();
    port.add(late.asWorker);
    expect(late.handed).toHaveLength(1);
    expect(await readFrom((late.handed[0] as Handed).socket, 6)).toBe('waited');
  });

  it('refuses new connections once closed, and closes those still waiting', async () => {
    const port = await dispatcher();
    const waiting = await client(port.port);
    await new Promise((resolve) => setTimeout(resolve, 30));
    port.close();
    expect(await waitUntil(() => waiting.closed(), 2000, 5)).toBe(true);
    const refused = await new Promise<string | undefined>((resolve) => {
      const socket = connect(port.port, '127.0.0.1');
      socket.on('connect', () => resolve(undefined));
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code));
    });
    expect(refused).toBe('ECONNREFUSED');
  });

  it('refuses a port in use with the error its address gives: the primary gives the words a single process uses', async () => {
    const taken = createServer();
    opened.servers.push(taken);
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    const grpc = { host: '127.0.0.1', port, refused: (err: Error) => cannotListen(`127.0.0.1:${port}`, err) };
    await expect(PortDispatcher.bind('grpc', grpc, silentLogger)).rejects.toMatchObject({
      code: 'ERR_LISTEN',
      field: 'address',
      message: `cannot listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
    });
    const discovery = {
      host: '127.0.0.1',
      port,
      refused: (err: NodeJS.ErrnoException) => cannotServe('discovery', '127.0.0.1', port, 'httpPort', err),
    };
    await expect(PortDispatcher.bind('discovery', discovery, silentLogger)).rejects.toMatchObject({
      code: 'ERR_LISTEN',
      field: 'httpPort',
      message: `cannot serve discovery on 127.0.0.1:${port}: EADDRINUSE`,
    });
  });
});
