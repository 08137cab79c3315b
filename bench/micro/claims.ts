import { readFileSync } from 'node:fs';
import { SUBJECTS_FILE } from '../kit/paths.js';

/** The claims of one GenerateJwt: {sub, iat, exp = iat + 7200}, as every server under test signs them. */
export interface BenchClaims {
  sub: string;
  iat: number;
  exp: number;
}

export const TTL_SECONDS = 7200;

/**
 * Round-robin claims over the committed subject pool, with iat read from the clock per
 * call, exactly the per-call work of GenerateJwt. Every library gets the same source so
 * that payload sizes and the cost of building the claims are equal.
 */
export class ClaimsSource {
  readonly #subjects: readonly string[];
  #next = 0;

  constructor(subjects: readonly string[] = loadSubjects()) {
    if (subjects.length === 0) throw new Error('ClaimsSource: empty subject pool');
    this.#subjects = subjects;
  }

  next(): BenchClaims {
    const sub = this.#subjects[this.#next] as string;
    this.#next = (this.#next + 1) % this.#subjects.length;
    const iat = Math.floor(Date.now() / 1000);
    return { sub, iat, exp: iat + TTL_SECONDS };
  }
}

function loadSubjects(): string[] {
  const parsed: unknown = JSON.parse(readFileSync(SUBJECTS_FILE, 'utf8'));
  if (!Array.isArray(parsed) || !parsed.every((s): s is string => typeof s === 'string')) {
    throw new Error(`${SUBJECTS_FILE}: expected a JSON array of strings`);
  }
  return parsed;
}
