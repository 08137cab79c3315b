/**
 * serveHanded (src/base/handed-port.ts): a server fed connections it did not accept gets them
 * set up as its own accept would have (the half-open setting: a received socket has Node's
 * default, which would end our side at a half-closing client's FIN and cut its answers),
 * is told it listens, and takes none once it has closed.
 */
import { createServer as createHttpServer } from 'node:http';
import { type Socket, Socket as NetSocket, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { type HandedPort, serveHanded } from '../src/base/handed-port.js';

function handedPort(): HandedPort & { hand(socket: Socket): boolean } {
  let accept: ((socket: Socket) => void) | undefined;
  return {
    port: 4321,
    receive: (next) => (accept = next),
    hand: (socket) => (accept === undefined ? false : (accept(socket), true)),
  };
}

describe('serveHanded', () => {
  it.each([true, false])('gives each connection the server (allowHalfOpen %s) its half-open setting, and returns the port', (halfOpen) => {
    const server = createServer({ allowHalfOpen: halfOpen });
    const seen: Socket[] = [];
    server.on('connection', (socket: Socket) => seen.push(socket));
    const handed = handedPort();
    expect(serveHanded(server, handed)).toBe(4321);
    const socket = new NetSocket({ allowHalfOpen: !halfOpen });
    expect(handed.hand(socket)).toBe(true);
    expect(seen).toEqual([socket]);
    expect(socket.allowHalfOpen).toBe(halfOpen);
  });

  it('tells the server it listens (node:http arms its request deadlines then), and stops taking connections once it closes', async () => {
    const server = createHttpServer();
    let listening = false;
    server.on('listening', () => (listening = true));
    const handed = handedPort();
    serveHanded(server, handed);
    expect(listening).toBe(true);
    server.close();
    await new Promise((resolve) => server.once('close', resolve));
    expect(handed.hand(new NetSocket())).toBe(false);
  });
});
