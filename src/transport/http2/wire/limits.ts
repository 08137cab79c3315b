/**
 * Every default of the wire layer's guards, in one place, with where each number comes
 * from. docs/http2-limits.md maps them to the attacks they answer and to their tests.
 * nghttp2 numbers: lib/nghttp2_session.h and lib/nghttp2_option.c of
 * https://github.com/nghttp2/nghttp2; Node numbers: https://nodejs.org/api/http2.html
 * (http2.createServer options).
 */

/**
 * Control-frame answers (PING and SETTINGS acks) queued and not yet taken by the socket.
 * A peer that sends PINGs and reads nothing makes the server queue answers; past this
 * many the connection ends (GOAWAY ENHANCE_YOUR_CALM). nghttp2's
 * NGHTTP2_DEFAULT_MAX_OBQ_FLOOD_ITEM, 1,000 (CVE-2019-9512, -9515).
 */
export const MAX_QUEUED_CONTROL_ANSWERS = 1_000;

/**
 * CONTINUATION frames one header block may take after its HEADERS: nghttp2 allows 8
 * (NGHTTP2_DEFAULT_MAX_CONTINUATIONS; the 2024 CONTINUATION flood, CVE-2024-27316 and
 * kin). A header list limit above the default allows more: twice the frames its largest
 * block takes at 16 KiB each.
 */
export const MAX_CONTINUATION_FRAMES = 8;

/**
 * The glitch budget: frames that are invalid or do nothing (WINDOW_UPDATE on a stream closed long ago,
 * PRIORITY, DATA under 5 bytes without END_STREAM, which no gRPC message is) may come in
 * a burst of 1,000, then 33 a second; past that, GOAWAY ENHANCE_YOUR_CALM. Node's
 * maxSessionInvalidFrames is 1,000, and nghttp2's glitch limiter
 * (nghttp2_option_set_glitch_rate_limit) defaulted to 1,000 and 33 a second (later
 * releases allow 10,000 and 330: nghttp2 counts frames gRPC clients do send, this counts
 * only what they never do). CVE-2019-9513, -9516, -9518. A rate rather than a total: a
 * long-lived client meets the odd race.
 */
export const GLITCH_BURST = 1_000;
export const GLITCH_RATE = 33;

/**
 * A DATA frame without END_STREAM shorter than this is a glitch: a gRPC message is at least
 * its 5-byte prefix, so only a window edge splits one that fine (the data dribble).
 */
export const DRIBBLE_BYTES = 5;

/**
 * Streams refused (REFUSED_STREAM: past maxConcurrentStreams or the memory ceiling) in a
 * burst of 100, then 10 a second; past that, GOAWAY ENHANCE_YOUR_CALM: a client that keeps
 * opening streams it is told to retry is not retrying. Node's maxSessionRejectedStreams, 100.
 */
export const REFUSED_STREAM_BURST = 100;
export const REFUSED_STREAM_RATE = 10;

/** Entries one SETTINGS frame may carry: nghttp2's NGHTTP2_DEFAULT_MAX_SETTINGS, 32 (CVE-2019-9515). */
export const MAX_SETTINGS_ENTRIES = 32;

/**
 * How long a new connection has to send the preface and its first SETTINGS (slowloris);
 * past it, GOAWAY SETTINGS_TIMEOUT, the code RFC 9113 (https://www.rfc-editor.org/rfc/rfc9113) §6.5.3 gives a SETTINGS exchange
 * that does not complete in time. Neither nghttp2 nor node:http2 has one (Node's server
 * `timeout` is idle time): this project's choice, far above the milliseconds a handshake
 * takes on a WAN.
 */
export const HANDSHAKE_TIMEOUT_MS = 10_000;

/** How long a connection that is ending may flush its output before its socket is destroyed. */
export const END_FLUSH_MS = 1_000;

/**
 * What an open stream is charged against the memory ceilings besides its header list and
 * the bytes it holds: its objects (the stream, the call, their closures and promises).
 * Measured (bench/zero-window/memory.ts, 20,000 unary calls held open by a client that
 * grants no window): ~2.3 KB of V8 heap each after a full GC, and ~4.3 KB of RSS, V8
 * keeping about as much again committed around what it uses. The ceilings bound RSS, so a
 * stream is charged 4 KiB.
 */
export const STREAM_COST_BYTES = 4096;

/**
 * Past the process-wide ceiling, a connection whose answers wait for flow-control window
 * gets no new stream; one that reads its answers and holds under
 * PROCESS_MEMORY_READER_SHARE of the ceiling (4 MiB of the default 256: ~900 calls in
 * flight) may still open streams until the process holds PROCESS_MEMORY_READER_RESERVE
 * more. So clients that do not read are refused first, and those that do are still
 * served; past the reserve every connection is refused, so the total stays bounded. A
 * client that opens many fresh connections can spend the reserve too: the stall bound
 * (maxFlowControlStallMs) then closes its connections and returns what they hold.
 */
export const PROCESS_MEMORY_READER_RESERVE = 0.25;
export const PROCESS_MEMORY_READER_SHARE = 1 / 64;

/**
 * A connection with open streams counts as one that reads (for the reserve above) only
 * while they move: request bytes read from the client, or answers written, within this
 * long. Streams opened and then left silent (half-open: HEADERS, no DATA) hold the budget
 * without making progress; past this they no longer reach the reserve. Above the 2 s a key
 * backend may take to sign (KEY_BACKEND_TIMEOUT_MS), so a call waiting on its handler
 * keeps its connection a reader.
 */
export const READER_PROGRESS_MS = 5_000;

/**
 * The stall check runs this many times per maxFlowControlStallMs: a connection is closed
 * once answers have waited that long with none of their bytes sent, at most a quarter
 * later.
 */
export const STALL_CHECKS_PER_BOUND = 4;
