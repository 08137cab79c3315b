/**
 * The wire layer's files import only files below them (the order is in the header of
 * src/transport/http2/wire/connection.ts): no import circle can come back.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const WIRE = new URL('../../src/transport/http2/wire/', import.meta.url);
const ORDER = [
  'frames',
  'limits',
  'parse',
  'header-block',
  'flow',
  'budget',
  'process-memory',
  'pings',
  'huffman',
  'request-fields',
  'hpack',
  'writer',
  'stream',
  'connection',
];

describe('wire layers', () => {
  it('names every file of the folder in the layer order', () => {
    const files = readdirSync(WIRE)
      .filter((name) => name.endsWith('.ts'))
      .map((name) => name.slice(0, -3));
    expect(files.sort()).toEqual([...ORDER].sort());
  });

  it.each(ORDER)('%s imports only files below it', (name) => {
    const source = readFileSync(new URL(`${name}.ts`, WIRE), 'utf8');
    const imported = [...source.matchAll(/from '\.\/([\w-]+)\.js'/g)].map((match) => match[1] as string);
    for (const dependency of imported) expect(ORDER.indexOf(dependency), `${name} imports ${dependency}`).toBeLessThan(ORDER.indexOf(name));
  });
});
