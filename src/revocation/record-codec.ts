/**
 * One revocation record as text, for every store that keeps one: a line of the revocations
 * file, a Redis `revoked:` value (the record without its jti, which the key holds) and the
 * Pub/Sub message after its version. One reader, so the stores cannot drift apart: a
 * record one of them refuses, every one refuses, and the refusal names the field.
 *
 * The record: `{"jti":"mB3jv0pQ7xX9cJqYg1a2Rw","expiresAt":1767225605,"reason":"laptop stolen","statusIndex":7}`,
 * `reason` and `statusIndex` only when there are.
 */
import { JwtGrpcError } from '../base/errors.js';
import type { Revocation } from '../contracts/revocation-store.js';

/**
 * Why a text is no revocation record: the field at fault (`record` for the whole) and what is wrong with it.
 *
 * @example
 * ```ts
 * const problem: RecordProblem = { field: 'statusIndex', problem: 'must be a non-negative integer, got -1' };
 * ```
 */
export interface RecordProblem {
  readonly field: 'record' | 'jti' | 'expiresAt' | 'reason' | 'statusIndex';
  readonly problem: string;
}

/**
 * A store's failure, naming the option that chose the store (`revocations` for the file,
 * `revocationStore` for Redis). The one constructor of ERR_REVOCATION_STORE_UNAVAILABLE.
 *
 * @example
 * ```ts
 * throw unavailable('revocations', 'revocations file /var/lib/revocations.jsonl is not open');
 * ```
 */
export function unavailable(option: 'revocations' | 'revocationStore', message: string, cause?: unknown): JwtGrpcError {
  return new JwtGrpcError('ERR_REVOCATION_STORE_UNAVAILABLE', message, { field: option, cause });
}

/**
 * The record as JSON, with its jti or (`withJti: false`, a Redis value) without it.
 *
 * @example
 * ```ts
 * encodeRecord({ jti: 'a1', expiresAt: 1795606973, statusIndex: 7 }); // '{"jti":"a1","expiresAt":1795606973,"statusIndex":7}'
 * ```
 */
export function encodeRecord(revocation: Revocation, withJti = true): string {
  const { jti, expiresAt, reason, statusIndex } = revocation;
  // JSON.stringify leaves out the fields that are undefined.
  return JSON.stringify(withJti ? { jti, expiresAt, reason, statusIndex } : { expiresAt, reason, statusIndex });
}

function problem(field: RecordProblem['field'], why: string, value: unknown): RecordProblem {
  return { field, problem: `${why}, got ${JSON.stringify(value) ?? String(value)}` };
}

/** The problem with the fields of a record, or undefined when they make one. */
function fieldProblem(jti: unknown, fields: Record<string, unknown>): RecordProblem | undefined {
  const { expiresAt, reason, statusIndex } = fields;
  if (typeof jti !== 'string' || jti.length === 0) return problem('jti', 'must be a non-empty string', jti);
  if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt))
    return problem('expiresAt', 'must be a number of Unix seconds', expiresAt);
  if (reason !== undefined && typeof reason !== 'string') return problem('reason', 'must be a string', reason);
  // An index names one token of the status list (draft-ietf-oauth-status-list-20 section 6.2): never negative.
  if (statusIndex !== undefined && !(Number.isSafeInteger(statusIndex) && (statusIndex as number) >= 0)) {
    return problem('statusIndex', 'must be a non-negative integer', statusIndex);
  }
  return undefined;
}

/**
 * A parsed record as a revocation, or what is wrong with it. `jti` comes from the record
 * itself (a file line, a message) or from outside it (a Redis key).
 *
 * @example
 * ```ts
 * readRecord('a1', { expiresAt: 1795606973 }); // { jti: 'a1', expiresAt: 1795606973 }
 * readRecord('a1', { expiresAt: 1795606973, statusIndex: -1 }); // { field: 'statusIndex', problem: 'must be a non-negative integer, got -1' }
 * ```
 */
export function readRecord(jti: unknown, fields: unknown): Revocation | RecordProblem {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return problem('record', 'must be a JSON object', fields);
  const found = fieldProblem(jti, fields as Record<string, unknown>);
  if (found !== undefined) return found;
  const { expiresAt, reason, statusIndex } = fields as { expiresAt: number; reason?: string; statusIndex?: number };
  return { jti: jti as string, expiresAt, ...(reason !== undefined && { reason }), ...(statusIndex !== undefined && { statusIndex }) };
}

/**
 * Whether {@link readRecord} found a problem rather than a revocation.
 *
 * @example
 * ```ts
 * const read = readRecord('a1', { expiresAt: 'soon' });
 * if (isRecordProblem(read)) console.log(`${read.field}: ${read.problem}`);
 * ```
 */
export function isRecordProblem(read: Revocation | RecordProblem): read is RecordProblem {
  return 'problem' in read;
}

/**
 * JSON text as a record, its jti inside it or given; `record` is at fault when the text is no JSON.
 *
 * @example
 * ```ts
 * decodeRecord('{"jti":"a1","expiresAt":1795606973}'); // { jti: 'a1', expiresAt: 1795606973 }
 * decodeRecord('{"expiresAt":1795606973}', 'a1'); // the same, its jti from a Redis key
 * ```
 */
export function decodeRecord(text: string, jti?: string): Revocation | RecordProblem {
  let fields: unknown;
  try {
    fields = JSON.parse(text);
  } catch {
    return { field: 'record', problem: 'is not JSON' };
  }
  return readRecord(jti ?? (fields as { jti?: unknown } | null)?.jti, fields);
}
