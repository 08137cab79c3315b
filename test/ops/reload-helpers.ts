/**
 * Waiting for key reloads in a running `jwt-grpc serve`'s log (JSON lines), and asking
 * every worker what it serves.
 */
import { expect } from 'vitest';
import { waitUntil } from '../../bench/kit/wait.js';
import { runCli } from '../../bench/kit/cli.js';
import type { CliServer } from '../../bench/kit/cli.js';
import type { ClientPool } from '../../bench/kit/grpc-clients.js';
import { clientsOnOwnConnections } from './helpers.js';

/** The JSON log lines written since `from` (an offset into stderr). */
export function jsonLines(server: CliServer, from = 0): Record<string, unknown>[] {
  return server.stderr
    .slice(from)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * Waits until every serving process has logged a reload since `from` whose keys include
 * `kid` with `role` ("signs", "verify-only", "deactivated"): each worker's own line in a
 * cluster, the one "keys reloaded" line of a single process.
 */
export async function waitForReload(server: CliServer, from: number, kid: string, role: string, timeoutMs = 20_000): Promise<void> {
  const cluster = server.workerPids.length > 1 || server.workerPids[0] !== server.pid;
  const has = (line: Record<string, unknown>): boolean =>
    Array.isArray(line['keys']) && (line['keys'] as string[]).some((key) => key.startsWith(`${kid} (`) && key.includes(role));
  const reloadedBy = (pid: number): boolean =>
    jsonLines(server, from).some(
      (line) => has(line) && (cluster ? line['message'] === `worker ${pid} reloaded keys` : line['message'] === 'keys reloaded'),
    );
  const done = await waitUntil(() => server.workerPids.every(reloadedBy), timeoutMs);
  expect(done, `every process reloaded ${kid} (${role}) within ${timeoutMs} ms; log since:\n${server.stderr.slice(from)}`).toBe(true);
}

/** Waits for the one error line of a failed reload since `from`, and returns its message. */
export async function waitForReloadFailure(server: CliServer, from: number, timeoutMs = 20_000): Promise<string> {
  const failure = (): Record<string, unknown> | undefined =>
    jsonLines(server, from).find((line) => line['level'] === 'error' && String(line['message']).startsWith('key reload failed'));
  expect(await waitUntil(() => failure() !== undefined, timeoutMs), `a reload failure line; log since:\n${server.stderr.slice(from)}`).toBe(
    true,
  );
  return String(failure()?.['message']);
}

/** `jwt-grpc keys ...`, which must succeed. */
export async function keysCli(...args: string[]): Promise<string> {
  const result = await runCli(['keys', ...args]);
  expect(result.code, `jwt-grpc keys ${args.join(' ')}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

/** GenerateJwt and GetJwks on `connections` connections of their own: what each worker they reach serves. */
export async function askEveryConnection(pool: ClientPool, port: number, connections: number, algorithm: string) {
  const clients = clientsOnOwnConnections(pool, port, connections);
  const kids = new Set<string>();
  const published: string[][] = [];
  for (const client of clients) {
    kids.add((await client.generateJwt({ algorithm, subject: 'reload@example.com' })).kid);
    published.push((JSON.parse((await client.getJwks()).jwks_json) as { keys: { kid: string }[] }).keys.map((key) => key.kid));
  }
  return { clients, kids: [...kids], published };
}
