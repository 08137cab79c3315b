import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/**
 * Readings of Linux /proc/net/tcp{,6}: which TCP connections exist on a port, in which
 * state, and which process holds them. Used to prove that calls which end badly
 * (deadline, client gone) leave no connection behind, and to see which cluster worker
 * serves a connection. Loopback only: every port read here is one this process chose.
 */

/** Kernel TCP states (include/net/tcp_states.h) as /proc/net/tcp writes them (hex). */
export const TCP_STATE = {
  ESTABLISHED: '01',
  CLOSE_WAIT: '08',
  LISTEN: '0A',
} as const;

export interface TcpSocket {
  readonly localPort: number;
  readonly remotePort: number;
  /** Two hex digits, see {@link TCP_STATE}. */
  readonly state: string;
  readonly inode: number;
}

function readTable(file: string): TcpSocket[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return []; // no IPv6 in this kernel, or not Linux
  }
  const sockets: TcpSocket[] = [];
  for (const line of text.split('\n').slice(1)) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10) continue;
    const local = fields[1] ?? '';
    const remote = fields[2] ?? '';
    sockets.push({
      localPort: Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16),
      remotePort: Number.parseInt(remote.slice(remote.lastIndexOf(':') + 1), 16),
      state: (fields[3] ?? '').toUpperCase(),
      inode: Number(fields[9]),
    });
  }
  return sockets;
}

/** Every TCP socket of this network namespace, IPv4 and IPv6. */
export function tcpSockets(): TcpSocket[] {
  return [...readTable('/proc/net/tcp'), ...readTable('/proc/net/tcp6')];
}

/**
 * Server-side sockets of `port` (local port = `port`) in the given states: with the
 * default, the connections a server on that port still holds open, ESTABLISHED or
 * CLOSE_WAIT (the client left, the server never closed its end: a leak).
 */
export function serverConnections(port: number, states: readonly string[] = [TCP_STATE.ESTABLISHED, TCP_STATE.CLOSE_WAIT]): TcpSocket[] {
  return tcpSockets().filter((s) => s.localPort === port && states.includes(s.state));
}

/** Inodes of the sockets a process holds open (empty when it is gone). */
export function socketInodes(pid: number): Set<number> {
  const inodes = new Set<number>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1] !== undefined) inodes.add(Number(match[1]));
    } catch {
      // closed in between
    }
  }
  return inodes;
}

/** How many ESTABLISHED connections of `port` the process `pid` serves (a cluster worker's share). */
export function connectionsServedBy(pid: number, port: number): number {
  const mine = socketInodes(pid);
  return serverConnections(port, [TCP_STATE.ESTABLISHED]).filter((s) => mine.has(s.inode)).length;
}
