/** The corpus format: hex text, '#' starts a comment line; one file is the bytes of one connection. */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const CORPUS_DIR = new URL('./corpus/', import.meta.url);

export function parseHex(text: string): Buffer {
  const hex = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('')
    .replace(/\s+/g, '');
  return Buffer.from(hex, 'hex');
}

export function formatHex(bytes: Buffer, comment: string): string {
  const lines = comment.split('\n').map((line) => `# ${line}`);
  for (let offset = 0; offset < bytes.length; offset += 32) lines.push(bytes.subarray(offset, offset + 32).toString('hex'));
  return `${lines.join('\n')}\n`;
}

/** The corpus entries, by file name. */
export function readCorpus(dir: string): { name: string; bytes: Buffer }[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.hex'))
    .sort()
    .map((name) => ({ name, bytes: parseHex(readFileSync(join(dir, name), 'utf8')) }));
}

export function writeEntry(dir: string, name: string, bytes: Buffer, comment: string): string {
  const path = join(dir, name);
  writeFileSync(path, formatHex(bytes, comment));
  return path;
}
