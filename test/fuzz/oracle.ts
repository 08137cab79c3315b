/**
 * The invariants checked between batches: the server process is alive, its memory is
 * under the per-connection ceiling times the connections open at once (plus the process's
 * baseline), and a healthy GenerateJwt over a fresh connection from a real gRPC client
 * succeeds.
 */
import type { ChildProcess } from 'node:child_process';
import { createJwtClient } from '../../src/lib/index.js';
import { sleep } from '../../bench/kit/wait.js';

/** The default per-connection memory ceiling of the own HTTP/2 transport (64 MB). */
export const SESSION_MEMORY_CEILING_BYTES = 64 * 1024 * 1024;

export interface Violation {
  readonly invariant: 'process-alive' | 'memory' | 'healthy-call';
  readonly detail: string;
}

export interface ServerState {
  readonly memory: NodeJS.MemoryUsage;
  /** Warnings and errors the server logged, by `level:message`. */
  readonly logged: Record<string, number>;
}

export function serverState(child: ChildProcess): Promise<ServerState> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no answer to memory in 5 s')), 5000);
    child.once('message', (message: Partial<ServerState>) => {
      clearTimeout(timer);
      if (message.memory === undefined) reject(new Error('unexpected message'));
      else resolve({ memory: message.memory, logged: message.logged ?? {} });
    });
    child.send('memory');
  });
}

/** Heap and buffers in use: what a connection's state costs (RSS also counts freed pages not returned). */
export async function usedBytes(child: ChildProcess): Promise<number> {
  const { memory } = await serverState(child);
  return memory.heapUsed + memory.external;
}

/** The first invariant that fails, or undefined. */
function exited(child: ChildProcess): Violation | undefined {
  if (child.exitCode === null && child.signalCode === null) return undefined;
  return { invariant: 'process-alive', detail: `server exited (code ${child.exitCode}, signal ${child.signalCode})` };
}

export async function check(child: ChildProcess, port: number, baselineBytes: number, connections: number): Promise<Violation | undefined> {
  const dead = exited(child);
  if (dead !== undefined) return dead;
  const client = createJwtClient(`127.0.0.1:${port}`, { deadlineMs: 5000 });
  try {
    const response = await client.generateJwt({ algorithm: 'HS256', subject: 'healthy' });
    if (response.jwt.split('.').length !== 3) return { invariant: 'healthy-call', detail: `not a JWS: ${response.jwt}` };
  } catch (error) {
    // A refused call is often the first sign of a death whose exit event has not come yet.
    await sleep(200);
    return exited(child) ?? { invariant: 'healthy-call', detail: String(error) };
  } finally {
    client.close();
  }
  try {
    const used = await usedBytes(child);
    const ceiling = baselineBytes + connections * SESSION_MEMORY_CEILING_BYTES;
    if (used > ceiling) return { invariant: 'memory', detail: `${used} bytes in use, ceiling ${ceiling}` };
  } catch (error) {
    return { invariant: 'process-alive', detail: String(error) };
  }
  return undefined;
}
