/**
 * A stand-in for a node:cluster Worker: the parts of the cluster primary take their
 * workers from a fork function, so their logic runs here without forking a process.
 */
import type { Worker } from 'node:cluster';
import { EventEmitter } from 'node:events';

let nextPid = 90_000;

export class FakeWorker extends EventEmitter {
  /** What the primary sent this worker, in order. */
  readonly sent: unknown[] = [];
  /** Signals the primary sent this worker's process. */
  readonly signals: string[] = [];
  /** Its process: a pid, kill, and `close` once it has exited and its channel closed. */
  readonly process = Object.assign(new EventEmitter(), {
    pid: nextPid++,
    kill: (signal: string): boolean => (this.signals.push(signal), true),
  });
  connected = true;

  isConnected(): boolean {
    return this.connected;
  }

  /** As Worker.send: `send(message[, handle[, options]][, callback])`, the callback the last argument that is a function. */
  send(message: unknown, ...rest: unknown[]): boolean {
    this.sent.push(message);
    const callback = rest.findLast((arg) => typeof arg === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }

  /** A message from this worker to the primary. */
  say(message: unknown): void {
    this.emit('message', message);
  }

  /** The process ended: the channel closes, then `exit` as node:cluster emits it, then the process's `close`. */
  exit(code: number | null = 1, signal: string | null = null): void {
    this.connected = false;
    this.emit('exit', code, signal);
    this.process.emit('close', code, signal);
  }

  /** Messages sent of one type. */
  sentOf(type: string): { type: string; [member: string]: unknown }[] {
    return this.sent.filter((message) => (message as { type?: unknown }).type === type) as { type: string }[];
  }

  get asWorker(): Worker {
    return this as unknown as Worker;
  }
}

/** A fork function that records what it forked, by slot, and whether as the spare. */
export function fakeFork(): {
  readonly fork: (index: number, spare: boolean) => Worker;
  readonly forked: { readonly index: number; readonly worker: FakeWorker; readonly spare: boolean }[];
} {
  const forked: { index: number; worker: FakeWorker; spare: boolean }[] = [];
  return {
    forked,
    fork: (index, spare) => {
      const worker = new FakeWorker();
      forked.push({ index, worker, spare });
      return worker.asWorker;
    },
  };
}
