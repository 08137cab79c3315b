/**
 * A worker's end of the primary's ports (src/cluster/inlet.ts): `adopted` goes back before
 * the connection reaches a server; each connection goes to the server of its port; one
 * that no server takes is closed, never left open.
 */
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConnectionInlet } from '../../src/cluster/inlet.js';
import type { WorkerMessage } from '../../src/cluster/messages.js';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';

function inlet(discovery?: number) {
  const events: string[] = [];
  const logger = recordingLogger();
  const send = (message: WorkerMessage): void => void events.push(JSON.stringify(message));
  return { inlet: new ConnectionInlet({ grpc: 50051, ...(discovery !== undefined && { discovery }) }, send, logger), events, logger };
}

describe('ConnectionInlet', () => {
  it("gives its servers the primary's port numbers", () => {
    expect(inlet(8080).inlet.ports.grpc.port).toBe(50051);
    expect(inlet(8080).inlet.ports.discovery?.port).toBe(8080);
    expect(inlet().inlet.ports.discovery).toBeUndefined();
  });

  it('says adopted before the server of the port gets the connection', () => {
    const { inlet: target, events } = inlet(8080);
    target.ports.grpc.receive(() => events.push('grpc server'));
    target.ports.discovery?.receive(() => events.push('discovery server'));
    target.take({ type: 'jwt-grpc:connection', port: 'discovery', id: 7 }, new Socket());
    expect(events).toEqual([JSON.stringify({ type: 'jwt-grpc:adopted', port: 'discovery', id: 7 }), 'discovery server']);
  });

  it('closes a connection no server takes: none made for its port yet, or one that stopped taking them', () => {
    const { inlet: target, events } = inlet();
    const early = new Socket();
    target.take({ type: 'jwt-grpc:connection', port: 'grpc', id: 1 }, early);
    expect(early.destroyed).toBe(true);
    target.ports.grpc.receive(() => events.push('served'));
    target.ports.grpc.receive(undefined);
    const late = new Socket();
    target.take({ type: 'jwt-grpc:connection', port: 'grpc', id: 2 }, late);
    expect(late.destroyed).toBe(true);
    expect(events.filter((event) => event === 'served')).toEqual([]);
  });

  it('answers a connection message that came without its connection, and warns', () => {
    const { inlet: target, events, logger } = inlet();
    target.take({ type: 'jwt-grpc:connection', port: 'grpc', id: 3 }, undefined);
    expect(events).toEqual([JSON.stringify({ type: 'jwt-grpc:adopted', port: 'grpc', id: 3 })]);
    expect(logger.lines.map((line) => line.message)).toEqual(['a connection message from the primary came without its connection']);
  });
});
