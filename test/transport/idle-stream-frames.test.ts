/**
 * Frames on an idle stream (RFC 9113 §5.1): the own HTTP/2 server answers RST_STREAM, DATA
 * or WINDOW_UPDATE on a stream id that was never opened with a connection error
 * PROTOCOL_ERROR, also when the id is below the last client stream (an even id: no stream of
 * this server's is ever even), rather than dropping the frame. Over a bare TCP connection.
 * Found by the wire review of 2026-11-25 (docs/review-wire-2026-11-25.md, defect 1).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRAME_TYPE, h2Frame } from './helpers/raw.js';
import { PROTOCOL_ERROR, errorCode, isType, outcome, probeServices, u32, unaryCall, withFrames } from './helpers/frame-exchange.js';
import { closeAllServers, startHttp2 } from './helpers/servers.js';

let port: number;
beforeAll(async () => {
  ({ port } = await startHttp2(probeServices()));
});
afterAll(closeAllServers);

describe('a frame on a stream that was never opened (RFC 9113 §5.1, idle)', () => {
  it.each([
    ['RST_STREAM (§6.4)', () => h2Frame(FRAME_TYPE.RST_STREAM, 0, 2, u32(8))],
    ['DATA (§6.1)', () => h2Frame(FRAME_TYPE.DATA, 0, 2, Buffer.from('x'))],
    ['WINDOW_UPDATE (§6.9)', () => h2Frame(FRAME_TYPE.WINDOW_UPDATE, 0, 2, u32(1))],
  ])('%s on an even stream id below the last client stream is a connection error PROTOCOL_ERROR', async (_name, make) => {
    await withFrames(port, async (conn) => {
      conn.send(...unaryCall(3));
      expect(await outcome(conn, 3)).toBe('grpc-status 0');
      conn.send(make());
      // Stream 2 is not above the last id (3), yet it was never opened: still idle, so GOAWAY, not silence.
      const goaway = await conn.waitFor(isType(FRAME_TYPE.GOAWAY), 1000);
      expect(errorCode(goaway)).toBe(PROTOCOL_ERROR);
    });
  });
});
