/**
 * Flow-control windows (RFC 9113 (https://www.rfc-editor.org/rfc/rfc9113) §5.2, §6.9), both ways, as one small type: what this side
 * may send, what the peer may send, and what it sent that is not yet returned to it. A
 * stream is one (H2Stream extends it, so a call allocates nothing more for it); the
 * connection holds another. As x/net/http2's flow.go, the 2^31 - 1 bound is checked here only,
 * and only these methods move a window: the fields are private.
 */
import { MAX_WINDOW_SIZE } from './frames.js';

export class FlowWindows {
  #send: number;
  #receive: number;
  #unacknowledged = 0;

  constructor(sendWindow: number, receiveWindow: number) {
    this.#send = sendWindow;
    this.#receive = receiveWindow;
  }

  /** @internal Bytes this side may still send (the peer's window). */
  get sendWindow(): number {
    return this.#send;
  }

  /** @internal Bytes the peer may still send. */
  get receiveWindow(): number {
    return this.#receive;
  }

  /** @internal Received bytes not yet returned to the peer by WINDOW_UPDATE. */
  get unacknowledged(): number {
    return this.#unacknowledged;
  }

  /** A WINDOW_UPDATE, or a change of SETTINGS_INITIAL_WINDOW_SIZE (`delta` may be negative): false when the window would pass 2^31 - 1. */
  addSend(delta: number): boolean {
    this.#send += delta;
    return this.#send <= MAX_WINDOW_SIZE;
  }

  /** `length` bytes sent. */
  takeSend(length: number): void {
    this.#send -= length;
  }

  /** `length` bytes received: false when the peer sent beyond its window (nothing is taken then). */
  takeReceive(length: number): boolean {
    if (length > this.#receive) return false;
    this.#receive -= length;
    this.#unacknowledged += length;
    return true;
  }

  /** Returns what was received to the peer's window: the WINDOW_UPDATE increment to send, or 0. */
  acknowledge(): number {
    const increment = this.#unacknowledged;
    this.#receive += increment;
    this.#unacknowledged = 0;
    return increment;
  }
}
