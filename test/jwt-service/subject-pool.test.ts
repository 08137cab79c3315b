/** createSubjectPool: round robin over a copy of the list it was given. */
import { describe, expect, it } from 'vitest';
import { createSubjectPool } from '../../src/jwt-service/subject-pool.js';

describe('createSubjectPool', () => {
  it('hands the subjects out in turn, wrapping around, unaffected by later changes to the list', () => {
    const subjects = ['a', 'b', 'c'];
    const pool = createSubjectPool(subjects);
    subjects[0] = 'changed';
    expect(Array.from({ length: 7 }, () => pool.next())).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a']);
  });

  it('hands out a single subject every time', () => {
    const pool = createSubjectPool(['only']);
    expect([pool.next(), pool.next()]).toEqual(['only', 'only']);
  });
});
