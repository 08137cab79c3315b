/**
 * The limits of the discovery HTTP port, in one place. They are fixed: the port serves two
 * small documents and two probes, so a client that needs more than this is broken or hostile.
 */

/**
 * `Cache-Control: max-age` of the documents, in seconds. A staged key (src/keys/rotation.ts)
 * must be published longer than this (plus the verifier's own refetch cooldown) before it
 * signs, so that every verifier has fetched it by then: 5 minutes keeps that wait short.
 */
export const DEFAULT_MAX_AGE_SECONDS = 300;
/**
 * A whole request must arrive within this long (at least the handshake deadline). Its head,
 * and a TLS handshake before it, within the option handshakeTimeoutMs (slowloris);
 * connections past DISCOVERY_MAX_CONNECTIONS (src/base/connection-guard.ts) are refused.
 */
export const REQUEST_TIMEOUT_MS = 15_000;
/** An idle keep-alive connection is closed after this long. */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** A connection with no traffic at all (no request yet, or a stalled read) is closed after this long. */
export const IDLE_TIMEOUT_MS = 30_000;
/** Largest request head in bytes; a larger one gets 431 from node:http. */
export const MAX_HEADER_BYTES = 8_192;
/** Most header lines read from one request; node:http ignores the rest. */
export const MAX_HEADERS_COUNT = 64;
/**
 * A Token Status List's served token is signed again once it is older than this share of
 * its ttl (and at once after a revocation or a key change): a verifier caches it until
 * `iat + ttl`, so a token handed out is always fresh for at least three quarters of its
 * ttl. The handler's `Cache-Control: max-age` of a list is the same share, so a shared
 * cache never hands a verifier a list older than half its ttl (docs/status-list.md).
 */
export const STATUS_LIST_RESIGN_FRACTION = 4;
