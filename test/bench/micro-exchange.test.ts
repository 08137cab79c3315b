/**
 * The micro benchmark's `exchange` rows: a token exchange of one of the issuer's own tokens
 * (JwtServiceCore, verify plus sign), beside its floor, node:crypto's ES256 verify and sign
 * of the same sizes, in the same run; each prepared task runs before it is timed.
 */
import { describe, expect, it } from 'vitest';
import { prepareTasks, taskKey } from '../../bench/micro/tasks.js';

describe('the micro exchange rows', () => {
  it('time our exchange beside its node:crypto floor for ES256, and the floor has no other row', async () => {
    const { tasks } = await prepareTasks(['ES256']);
    const keys = tasks.map(taskKey);
    expect(keys).toContain('ES256/exchange/jwt-grpc');
    expect(keys).toContain('ES256/exchange/node:crypto');
    expect(keys.filter((key) => key.endsWith('/node:crypto'))).toEqual(['ES256/exchange/node:crypto']);
    // The JWT libraries' rows stay as they were: no exchange row for a library that has none.
    expect(keys.filter((key) => key.includes('/exchange/'))).toHaveLength(2);
    for (const task of tasks.filter((one) => one.operation === 'exchange')) await task.fn();
  });
});
