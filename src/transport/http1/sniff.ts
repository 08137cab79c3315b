/**
 * One port, two HTTP versions: the first bytes of a connection say which parser takes it.
 * An HTTP/1.1 request starts with its method and a space (RFC 9112 §3
 * (https://www.rfc-editor.org/rfc/rfc9112#section-3)); the HTTP/2 client preface starts
 * "PRI " (RFC 9113 §3.4 (https://www.rfc-editor.org/rfc/rfc9113#section-3.4)). Only the
 * methods of RFC 9110 §9 and PATCH (RFC 5789) count as HTTP/1.1: any other first word goes
 * to the HTTP/2 path, which refuses it as a bad preface (GOAWAY, counted `preface`), as h2spec
 * expects of "INVALID CONNECTION PREFACE". The sniff reads at most {@link SNIFF_MAX_BYTES}
 * and waits at most what is left of the connection's handshake deadline; the bytes it read
 * are handed back (unshift) to whichever parser takes the socket.
 */
import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';

/**
 * What the first bytes were: `http/1.1` (a method and a space), `other` (the HTTP/2
 * preface, or anything else), `timeout` (too few bytes to tell within the deadline), or
 * `closed` (the peer went away first; nothing to count, as for a TCP probe).
 */
export type Sniffed = 'http/1.1' | 'other' | 'timeout' | 'closed';

/** The request lines' starts taken for HTTP/1.1: RFC 9110 §9's methods and PATCH, each with its space. */
const REQUEST_STARTS: readonly Buffer[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'].map((method) =>
  Buffer.from(`${method} `, 'latin1'),
);

/** Bytes the sniff needs at most: the longest method and its space. */
export const SNIFF_MAX_BYTES = Math.max(...REQUEST_STARTS.map((start) => start.length));

/**
 * `http/1.1` when `bytes` start with a method and a space, `other` when they cannot, or
 * undefined while they are the start of one.
 *
 * @example
 * ```ts
 * classify(Buffer.from('POST /jwt.JwtService/Sign HTTP/1.1')); // 'http/1.1'
 * classify(Buffer.from('PRI * HTTP/2.0')); // 'other'
 * classify(Buffer.from('OPT')); // undefined
 * ```
 */
export function classify(bytes: Buffer): 'http/1.1' | 'other' | undefined {
  let partial = false;
  for (const start of REQUEST_STARTS) {
    const compared = Math.min(bytes.length, start.length);
    if (bytes.compare(start, 0, compared, 0, compared) !== 0) continue;
    if (compared === start.length) return 'http/1.1';
    partial = true;
  }
  return partial ? undefined : 'other';
}

/**
 * Reads the first bytes of `socket` for at most `deadlineMs` and calls `decided` once with
 * what they were. Every byte read is pushed back (unshift) and the socket left paused, so
 * the parser that takes it reads them first; it must resume the socket.
 *
 * @example
 * ```ts
 * sniffProtocol(socket, guard.remainingMs(socket), (sniffed) => {
 *   if (sniffed === 'http/1.1') http1Server.emit('connection', socket);
 *   else serveHttp2(socket);
 *   socket.resume();
 * });
 * ```
 */
export function sniffProtocol(socket: Socket, deadlineMs: number, decided: (sniffed: Sniffed) => void): void {
  const chunks: Buffer[] = [];
  let read = 0;
  const finish = (sniffed: Sniffed): void => {
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('close', onClose);
    socket.off('error', onError);
    socket.pause();
    if (read > 0 && sniffed !== 'closed') socket.unshift(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, read));
    decided(sniffed);
  };
  const onData = (chunk: Buffer): void => {
    chunks.push(chunk);
    read += chunk.length;
    const sniffed = classify(chunks.length === 1 ? chunk : Buffer.concat(chunks, read));
    if (sniffed !== undefined) finish(sniffed);
  };
  const onClose = (): void => finish('closed');
  const onError = (): void => {
    socket.destroy();
  };
  const timer = setTimeout(() => finish('timeout'), deadlineMs).unref();
  socket.on('data', onData);
  socket.on('close', onClose);
  socket.on('error', onError);
}
