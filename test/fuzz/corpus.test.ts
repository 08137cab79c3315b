/**
 * Replays the fuzz corpus (test/fuzz/corpus/*.hex, each the bytes one connection sent)
 * against a server on the own HTTP/2 transport: after each entry the server still answers
 * a GenerateJwt from a real client. Entries named in corpus/known-failures.json are
 * defects found and not yet fixed: their tests are expected to fail (it.fails), so the
 * suite stays green, the defect stays visible, and a fix turns them red until the entry
 * leaves the list.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JwtClient, type KeySet, createJwtClient, generateKeys } from '../../src/lib/index.js';
import { closeAllServers, startServer } from '../../bench/kit/jwt-servers.js';
import { CORPUS_DIR, readCorpus } from './corpus.js';
import { drive } from './drive.js';
import { Prng } from './prng.js';

const corpusDir = fileURLToPath(CORPUS_DIR);
const knownFailures = new Set<string>(JSON.parse(readFileSync(new URL('known-failures.json', CORPUS_DIR), 'utf8')) as string[]);
const entries = readCorpus(corpusDir);

describe('fuzz corpus, replayed on the own HTTP/2 transport', () => {
  let keys: KeySet;
  let port: number;
  let client: JwtClient;

  beforeAll(async () => {
    keys = await generateKeys({ algorithms: ['HS256'] });
    ({ port } = await startServer({ transport: 'http2', keys }));
    client = createJwtClient(`127.0.0.1:${port}`, { deadlineMs: 5000 });
  });
  afterAll(async () => {
    client.close();
    await closeAllServers();
  });

  it('has entries, and every known failure names one', () => {
    expect(entries.length).toBeGreaterThan(0);
    for (const name of knownFailures) expect(entries.map((entry) => entry.name)).toContain(name);
  });

  for (const { name, bytes } of entries) {
    const test = knownFailures.has(name) ? it.fails : it;
    test(`${name}: the server survives it and keeps serving`, async () => {
      await drive(port, bytes, new Prng(0), 100);
      const response = await client.generateJwt({ algorithm: 'HS256', subject: 'after-fuzz' });
      expect(response.jwt.split('.')).toHaveLength(3);
      expect(response.sub).toBe('after-fuzz');
    });
  }
});
