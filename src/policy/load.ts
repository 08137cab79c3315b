import { readFile } from 'node:fs/promises';
import { JwtGrpcError } from '../base/errors.js';
import { type JwtPolicy, checkPolicy } from './document.js';

/**
 * Reads and checks a policy file (JSON, schema {@link JWT_POLICY_SCHEMA}). Throws
 * `ERR_INVALID_OPTION` with one line: the file, the JSON path, the problem.
 *
 * @example
 * ```ts
 * const server = createJwtServer({ policy: await loadPolicy('policy.json') });
 * ```
 */
export async function loadPolicy(file: string): Promise<JwtPolicy> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new JwtGrpcError('ERR_INVALID_OPTION', `policy file ${file}: cannot read it: ${(err as NodeJS.ErrnoException).code ?? err}`, {
      field: 'policy',
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new JwtGrpcError('ERR_INVALID_OPTION', `policy file ${file}: $: not valid JSON (${(err as Error).message})`, { field: 'policy' });
  }
  return checkPolicy(parsed, `policy file ${file}`);
}
