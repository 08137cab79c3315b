/**
 * A request's content-length (RFC 9113 §8.1.1): the own HTTP/2 server compares it with the
 * DATA received however the request ends, with DATA carrying END_STREAM or with trailers,
 * and resets a request whose length does not match (stream error PROTOCOL_ERROR) rather than
 * answering it. Over a bare TCP connection. Found by the wire review of 2026-11-25
 * (docs/review-wire-2026-11-25.md, defect 2).
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

describe('content-length checked when trailers end the request (RFC 9113 §8.1.1)', () => {
  it('resets a request that ends with trailers after fewer DATA bytes than its content-length (RST_STREAM PROTOCOL_ERROR)', async () => {
    await withFrames(port, async (conn) => {
      conn.send(
        h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 1, requestBlock(CLIENT_STREAM, [['content-length', '1000']])),
        h2Frame(FRAME_TYPE.DATA, 0, 1, frame(json({ fill: 'abc' }))),
        h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS | FRAME_FLAG.END_STREAM, 1, hpackLiteral('x-trailer', 'v')),
      );
      // Checked only on DATA with END_STREAM, the length would pass unchecked and the call be answered.
      expect(await outcome(conn, 1)).toBe(`RST_STREAM ${PROTOCOL_ERROR}`);
    });
  });
});
