/**
 * The per-connection memory ceiling's accounting for refused streams (RFC 9113 §8.1.1,
 * §5.4.2): a stream the own HTTP/2 server refuses for a malformed content-length gives back
 * the memory it was charged, so a client that sends many such requests does not push the
 * connection past `maxConnectionMemoryMb`, after which every new stream, well-formed or not,
 * would be REFUSED_STREAM. Over a bare TCP connection. Found by the wire review of
 * 2026-11-25 (docs/review-wire-2026-11-25.md, defect 4).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { FRAME_FLAG, FRAME_TYPE, h2Frame, requestBlock } from './helpers/raw.js';
import { UNARY, endOrReset, outcome, probeServices, unaryCall, withFrames } from './helpers/frame-exchange.js';
import { closeAllServers, startHttp2 } from './helpers/servers.js';

afterAll(closeAllServers);

describe('memory charge of streams refused for a malformed content-length (maxConnectionMemoryMb)', () => {
  it('gives the charge back, so a well-formed call is served after 600 refused streams on a 1 MiB ceiling', async () => {
    const { port } = await startHttp2(probeServices(), { maxConnectionMemoryMb: 1 });
    await withFrames(port, async (conn) => {
      const bad = requestBlock(UNARY, [['content-length', 'x']]);
      // 600 refused streams of ~2.2 KB each: past 1 MiB if their charge is never returned.
      conn.send(
        ...Array.from({ length: 600 }, (_, i) =>
          h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS | FRAME_FLAG.END_STREAM, 2 * i + 1, bad),
        ),
      );
      // Each is refused PROTOCOL_ERROR while the ceiling is not reached; kept charges would make the later ones REFUSED_STREAM.
      await endOrReset(conn, 1199);
      // Nothing is open on the connection now: a well-formed call must be served, not REFUSED_STREAM.
      conn.send(...unaryCall(1201));
      expect(await outcome(conn, 1201)).toBe('grpc-status 0');
    });
  });
});
