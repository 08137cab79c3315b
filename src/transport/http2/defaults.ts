/**
 * Every default of jwt-grpc's own gRPC server, in one place. Sources: the gRPC over HTTP/2
 * protocol document, `doc/keepalive.md`, gRFC A8 (client-side keepalive, server
 * enforcement) and A9 (server-side connection management).
 */

/** Largest request message accepted (compressed, and again decompressed): jwt-grpc's requests are small. */
export const DEFAULT_MAX_RECEIVE_MESSAGE_BYTES = 64 * 1024;

/**
 * SETTINGS_MAX_HEADER_LIST_SIZE: the protocol document suggests servers limit request
 * headers, 8 KiB by default; 16 KiB leaves room for large authorization metadata. A
 * larger request is reset with ENHANCE_YOUR_CALM (grpc clients report RESOURCE_EXHAUSTED).
 */
export const DEFAULT_MAX_HEADER_LIST_BYTES = 16 * 1024;

/** SETTINGS_MAX_CONCURRENT_STREAMS: unlimited (2^32 - 1), as gRPC servers default to. */
export const DEFAULT_MAX_CONCURRENT_STREAMS = 2 ** 32 - 1;

/** A8/A9: a server pings each connection this long after the last ping's ack (2 hours). */
export const DEFAULT_KEEPALIVE_TIME_MS = 2 * 60 * 60 * 1000;

/** A8/A9: how long a keepalive ping waits for its ack before the connection is closed. */
export const DEFAULT_KEEPALIVE_TIMEOUT_MS = 20_000;

/** A8 server enforcement: the shortest interval between client pings tolerated (5 minutes). */
export const DEFAULT_KEEPALIVE_PERMIT_TIME_MS = 5 * 60 * 1000;

/** A8: the interval between client pings tolerated while no call is in flight, unless permitted. */
export const KEEPALIVE_WITHOUT_CALLS_PERMIT_TIME_MS = 2 * 60 * 60 * 1000;

/** A8: pings too early beyond this many close the connection (GOAWAY ENHANCE_YOUR_CALM, "too_many_pings"). */
export const DEFAULT_MAX_PING_STRIKES = 2;

/** A9: connections live forever unless an age is set. */
export const DEFAULT_MAX_CONNECTION_AGE_MS = Number.POSITIVE_INFINITY;

/** A9: once a connection is past its age, calls in flight get this long to finish (default: unbounded). */
export const DEFAULT_MAX_CONNECTION_AGE_GRACE_MS = Number.POSITIVE_INFINITY;

/** A9: each connection's age is jittered by up to this fraction either way, so reconnections spread out. */
export const MAX_CONNECTION_AGE_JITTER = 0.1;

/** How long `close()` lets calls in flight finish before cancelling them. */
export const DEFAULT_CLOSE_GRACE_MS = 10_000;

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

/**
 * A connection's memory ceiling, in MB: its open streams (~2 KiB each plus their header
 * lists) and the request bytes of messages not yet whole. New streams past it are
 * refused, and the stream whose DATA crosses it is reset with ENHANCE_YOUR_CALM. It
 * bounds what a client can make the server hold with streams it opens and never ends
 * (~30,000 at the default), or with many large messages each sent in part.
 */
export const DEFAULT_MAX_SESSION_MEMORY_MB = 64;

/** Decoded messages a streaming request may queue ahead of the handler before the stream is paused. */
export const REQUEST_QUEUE_HIGH_WATER_MARK = 16;


