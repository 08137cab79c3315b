import type { Jwk } from '../keys/export.js';

/**
 * The IPC protocol between primary and workers. Keys travel over the IPC channel (a
 * private pipe between the two processes), never through the environment or argv,
 * which other processes of the same user can read.
 */
export type PrimaryMessage =
  | { readonly type: 'jwt-grpc:start'; readonly jwks: { keys: Jwk[] } }
  | { readonly type: 'jwt-grpc:shutdown'; readonly graceMs: number };

/**
 * `hello` asks for the keys: a message sent before the worker's module graph has loaded
 * and attached its listener would be dropped, so the worker speaks first.
 */
export type WorkerMessage = { readonly type: 'jwt-grpc:hello' } | { readonly type: 'jwt-grpc:listening'; readonly port: number };

export function isPrimaryMessage(message: unknown): message is PrimaryMessage {
  const type = (message as { type?: unknown } | null)?.type;
  return type === 'jwt-grpc:start' || type === 'jwt-grpc:shutdown';
}

export function isWorkerMessage(message: unknown): message is WorkerMessage {
  const type = (message as { type?: unknown } | null)?.type;
  return type === 'jwt-grpc:hello' || type === 'jwt-grpc:listening';
}
