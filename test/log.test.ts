/**
 * createStderrLogger writes the info lines of one turn of the event loop together (an
 * audit line per call must not cost a write(2) per call), warnings and errors at once
 * after what is pending, so the order of the lines holds, in both formats.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createStderrLogger } from '../src/lib/index.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('stderr lines', () => {
  afterEach(() => vi.restoreAllMocks());

  for (const format of ['text', 'json'] as const) {
    it(`${format}: 100 info lines of one turn are one write, on the next turn`, async () => {
      const writes: string[] = [];
      vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => writes.push(String(chunk)) > 0);
      const logger = createStderrLogger({ level: 'info', format });
      for (let i = 0; i < 100; i++) logger.info(`issued ${i}`, { jti: `j${i}` });
      expect(writes).toEqual([]);
      await nextTurn();
      expect(writes).toHaveLength(1);
      const lines = (writes[0] as string).trimEnd().split('\n');
      expect(lines).toHaveLength(100);
      expect(lines[99]).toContain('issued 99');
    });

    it(`${format}: a warning goes out at once, after the info lines before it`, async () => {
      const writes: string[] = [];
      vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => writes.push(String(chunk)) > 0);
      const logger = createStderrLogger({ level: 'info', format });
      logger.info('first');
      logger.warn('second');
      expect(
        writes
          .join('')
          .trimEnd()
          .split('\n')
          .map((line) => /first|second/.exec(line)?.[0]),
      ).toEqual(['first', 'second']);
      logger.error('third');
      expect(writes.join('')).toContain('third');
      await nextTurn();
      expect(writes.join('').match(/first/g)).toHaveLength(1);
    });
  }
});
