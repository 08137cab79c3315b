import { readFile } from 'node:fs/promises';
import { JwtGrpcError } from '../base/errors.js';
import { jsonErrorPosition } from '../keys/json-position.js';

/**
 * Reads a subject pool: a JSON array of non-empty strings (e.g. the benchmarks'
 * `bench/fixtures/subjects.json`, 1,000 e-mail addresses).
 *
 * @example
 * ```ts
 * const server = createJwtServer({ subjects: await loadSubjects('subjects.json') });
 * ```
 */
export async function loadSubjects(file: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new JwtGrpcError('ERR_FILE', `cannot read subjects file ${file}: ${why}`, { field: file, cause: err });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const why = `not valid JSON (${jsonErrorPosition(text)})`;
    throw new JwtGrpcError('ERR_FILE', `cannot read subjects file ${file}: ${why}`, { field: file, cause: err });
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((s) => typeof s === 'string' && s.length > 0)) {
    throw new JwtGrpcError('ERR_FILE', `subjects file ${file} must hold a non-empty JSON array of non-empty strings`, {
      field: file,
    });
  }
  return parsed as string[];
}
