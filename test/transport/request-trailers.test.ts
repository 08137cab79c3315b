/**
 * Request trailers (RFC 9113 §8.1, §8.2): the own HTTP/2 server holds a trailer field to the
 * rules of a header field (lowercase name, no connection-specific field, no leading or
 * trailing whitespace in a value) and resets a request whose trailers break them (stream
 * error PROTOCOL_ERROR) rather than answering it. Over a bare TCP connection. Found by the
 * wire review of 2026-11-25 (docs/review-wire-2026-11-25.md, defect 3).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRAME_FLAG, FRAME_TYPE, frame, h2Frame, hpackLiteral, requestBlock } from './helpers/raw.js';
import { CLIENT_STREAM, PROTOCOL_ERROR, json, outcome, probeServices, withFrames } from './helpers/frame-exchange.js';
import { closeAllServers, startHttp2 } from './helpers/servers.js';

let port: number;
beforeAll(async () => {
  ({ port } = await startHttp2(probeServices()));
});
afterAll(closeAllServers);

describe('malformed request trailers (RFC 9113 §8.1, §8.2)', () => {
  it.each([
    ['an uppercase field name (§8.2.1)', 'X-Trailer', 'v'],
    ['a connection-specific field (§8.2.2)', 'connection', 'close'],
    ['a value with a leading space (§8.2.1)', 'x-trailer', ' v'],
  ])('resets a request whose trailers carry %s (RST_STREAM PROTOCOL_ERROR)', async (_name, name, value) => {
    await withFrames(port, async (conn) => {
      conn.send(
        h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 1, requestBlock(CLIENT_STREAM)),
        h2Frame(FRAME_TYPE.DATA, 0, 1, frame(json({ fill: 'abc' }))),
        h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS | FRAME_FLAG.END_STREAM, 1, hpackLiteral(name, value)),
      );
      // Trailers checked for pseudo-headers alone would let these through and the call be answered.
      expect(await outcome(conn, 1)).toBe(`RST_STREAM ${PROTOCOL_ERROR}`);
    });
  });
});
