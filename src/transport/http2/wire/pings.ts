/** This side's PINGs (RFC 9113 (https://www.rfc-editor.org/rfc/rfc9113) §6.7) awaiting their acks, each with what waits for it. */
import { Buffer } from 'node:buffer';

/** Pings of ours awaiting an ack, at most. */
const MAX_OUTSTANDING_PINGS = 10;

interface PendingPing {
  readonly payload: Buffer;
  readonly callback: (err: Error | null) => void;
}

export class OutstandingPings {
  readonly #pings: PendingPing[] = [];
  #counter = 0;

  /** The payload of a new PING whose ack runs `callback`; undefined when too many are outstanding. */
  start(callback: (err: Error | null) => void): Buffer | undefined {
    if (this.#pings.length >= MAX_OUTSTANDING_PINGS) return undefined;
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(++this.#counter, 4);
    this.#pings.push({ payload, callback });
    return payload;
  }

  /** A PING ack: false when it answers no ping of ours. */
  acked(payload: Buffer): boolean {
    const index = this.#pings.findIndex((ping) => ping.payload.equals(payload));
    if (index < 0) return false;
    (this.#pings.splice(index, 1)[0] as PendingPing).callback(null);
    return true;
  }

  /** The connection closed: every ping fails. */
  failAll(): void {
    for (const ping of this.#pings.splice(0)) ping.callback(new Error('the connection closed'));
  }
}
