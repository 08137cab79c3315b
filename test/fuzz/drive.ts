/** Writes one exchange's bytes on a fresh TCP connection and reads what the server answers. */
import { connect } from 'node:net';
import type { Prng } from './prng.js';

export interface DriveResult {
  /** Bytes the server sent back. */
  readonly received: number;
  /** True when the server closed the connection (after GOAWAY or an error), false when the fuzzer did. */
  readonly serverClosed: boolean;
  /** The types of the frames the server sent, in order (first 64). */
  readonly frameTypes: number[];
}

function frameTypes(bytes: Buffer): number[] {
  const types: number[] = [];
  for (let offset = 0; offset + 9 <= bytes.length && types.length < 64; ) {
    types.push(bytes[offset + 3] ?? -1);
    offset += 9 + bytes.readUIntBE(offset, 3);
  }
  return types;
}

/**
 * Sends `bytes` in chunks of random sizes (so frame and field boundaries fall anywhere in
 * a read), then waits until the server closes or `idleMs` pass without a byte from it.
 */
export function drive(port: number, bytes: Buffer, rng: Prng, idleMs: number): Promise<DriveResult> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let serverClosed = true;
    let idle = setTimeout(finish, idleMs * 4);
    function finish(): void {
      serverClosed = false;
      socket.destroy();
    }
    socket.on('data', (chunk: Buffer) => {
      if (chunks.length < 256) chunks.push(chunk);
      clearTimeout(idle);
      idle = setTimeout(finish, idleMs);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(idle);
      const received = Buffer.concat(chunks);
      resolve({ received: received.length, serverClosed, frameTypes: frameTypes(received) });
    });
    socket.on('connect', () => {
      const pieces = rng.chance(0.5) ? 1 : 1 + rng.int(8);
      const size = Math.ceil(bytes.length / pieces);
      for (let offset = 0; offset < bytes.length; offset += size) socket.write(bytes.subarray(offset, offset + size));
    });
  });
}
