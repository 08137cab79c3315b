/**
 * The fixed settings of jwt-grpc's own gRPC server, those no option changes. The defaults
 * and bounds of its options are rows of the option table (src/options/table.ts). Sources:
 * the gRPC over HTTP/2 protocol document (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md), `doc/keepalive.md` (https://github.com/grpc/grpc/blob/master/doc/keepalive.md), gRFC A8 (https://github.com/grpc/proposal/blob/master/A8-client-side-keepalive.md) (client-side
 * keepalive, server enforcement) and A9 (https://github.com/grpc/proposal/blob/master/A9-server-side-connection-management.md) (server-side connection management).
 */

/** A8: the interval between client pings tolerated while no call is in flight, unless permitted. */
export const KEEPALIVE_WITHOUT_CALLS_PERMIT_TIME_MS = 2 * 60 * 60 * 1000;

/** A9: each connection's age is jittered by up to this fraction either way, so reconnections spread out. */
export const MAX_CONNECTION_AGE_JITTER = 0.1;

/**
 * After the first GOAWAY of a graceful close (last stream 2^31 - 1), the server waits for
 * the ack of a PING, which proves the client saw the GOAWAY, and at most this long, before
 * the second GOAWAY names the last stream it accepted.
 */
export const GOAWAY_PING_TIMEOUT_MS = 1_000;

/**
 * The Rapid Reset (CVE-2023-44487) guard counts RST_STREAM frames a connection receives:
 * past a burst, then a rate per second, the connection is closed (GOAWAY
 * ENHANCE_YOUR_CALM). node:http2's defaults, a burst of 1,000 then 33 a second, are
 * too tight for gRPC, and this transport and the grpc-js one share these. gRPC clients reset a stream for every call they cancel or whose deadline
 * passes, so one busy client crosses 33 a second and loses its healthy calls with the
 * connection. 10,000 / 10,000 stays above what calls alone reach, and a client that
 * resets 10,000 streams a second could do more harm by sending the calls.
 */
export const STREAM_RESET_BURST = 10_000;
export const STREAM_RESET_RATE = 10_000;

/** Decoded messages a streaming request may queue ahead of the handler before the stream is paused. */
export const REQUEST_QUEUE_HIGH_WATER_MARK = 16;

/**
 * HTTP/1.1: what a request body may add to `maxReceiveMessageBytes`: a gRPC-Web message's
 * 5-byte prefix (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-WEB.md), and base64's
 * 4 bytes per 3 for `application/grpc-web-text`; Connect unary sends the bare message
 * (https://connectrpc.com/docs/protocol/#unary-request). Body bytes held past it (not yet
 * taken as whole messages) are refused 413 before the rest is read, and the connection closed.
 */
export const HTTP1_MESSAGE_PREFIX_BYTES = 5;
