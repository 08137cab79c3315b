/**
 * Errors crossing the API are `JwtGrpcError`s with a code (src/base/errors.ts), and an
 * invariant of jwt-grpc's own is stated through src/base/assert.ts (code `ERR_INTERNAL`). So
 * src/ throws or rejects with no plain `Error`, `TypeError` or `RangeError`, and the only
 * classes that extend `Error` itself are `JwtGrpcError` and the few internal ones listed
 * below, each caught where it is thrown and turned into a status, a GOAWAY or a
 * `JwtGrpcError` before anything reaches a caller. A new one fails here, file and line named.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/**
 * Classes of src/ that extend `Error` rather than `JwtGrpcError`, with where they are
 * turned into something else. None of them leaves its layer.
 */
const INTERNAL_ERROR_CLASSES: Readonly<Record<string, string>> = {
  JwtGrpcError: 'base/errors.ts: the one error class of the API',
  SchemaProblem:
    'policy/json-schema.ts: becomes ERR_INVALID_OPTION naming the policy or trust file path (policy/document.ts, exchange/trust.ts)',
  OAuthAnswer: "exchange/token-endpoint.ts: becomes the token endpoint's OAuth error answer, never thrown past it",
  WireError:
    "jwt-service/codec/wire.ts: becomes INVALID_ARGUMENT at a request decoder's edge (decode.ts), INTERNAL at a response decoder's (decode-response.ts)",
  HpackError: 'transport/http2/wire/frames.ts: becomes a COMPRESSION_ERROR GOAWAY in the connection',
  ConnectionError: 'transport/http2/wire/frames.ts: becomes a GOAWAY in the connection',
};

/** A throw or rejection with a plain error, or a class extending Error, on one line of code. */
const PLAIN = /\b(?:throw|reject\()\s*new (?:Error|TypeError|RangeError)\(/;
const EXTENDS_ERROR = /\bclass (\w+) extends Error\b/;

/** Lines of `text` that are code: comment lines (`//`, `/*`, ` * `) left out, with their 1-based numbers. */
function codeLines(text: string): { line: number; code: string }[] {
  return text
    .split('\n')
    .map((code, i) => ({ line: i + 1, code }))
    .filter(({ code }) => !/^\s*(?:\/\/|\/\*|\*)/.test(code));
}

/** `file:line: code` for each plain throw or rejection of `text`. */
function plainThrows(file: string, text: string): string[] {
  return codeLines(text)
    .filter(({ code }) => PLAIN.test(code))
    .map(({ line, code }) => `${file}:${line}: ${code.trim()}`);
}

/** The names of the classes `text` declares as extending `Error` itself. */
function errorClasses(text: string): string[] {
  return codeLines(text).flatMap(({ code }) => EXTENDS_ERROR.exec(code)?.[1] ?? []);
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const FILES = sources(SRC).map((path) => ({ file: relative(SRC, path), text: readFileSync(path, 'utf8') }));

describe('errors in src/', () => {
  it('throw or reject no plain Error, TypeError or RangeError (a JwtGrpcError with a code, or assert/internalError)', () => {
    expect(FILES.length).toBeGreaterThan(100);
    expect(FILES.flatMap(({ file, text }) => plainThrows(file, text))).toEqual([]);
  });

  it('extend Error only in the listed internal classes, each turned into something else before the API', () => {
    const found = FILES.flatMap(({ file, text }) => errorClasses(text).map((name) => `${name} (${file})`));
    expect(found.filter((entry) => !((entry.split(' ')[0] as string) in INTERNAL_ERROR_CLASSES))).toEqual([]);
    // A class gone from src/ leaves the list too: it would let a new one of that name in unseen.
    expect(Object.keys(INTERNAL_ERROR_CLASSES).sort()).toEqual(found.map((entry) => entry.split(' ')[0]).sort());
  });

  it('the check finds what it looks for, on code lines only', () => {
    const text = [
      "if (a) throw new Error('x');",
      '  throw new TypeError(`y`);',
      "return Promise.reject(new RangeError('z'));",
      "setTimeout(() => reject(new Error('late')), 1);",
      ' * throw new Error(`an example in TSDoc`);',
      "// throw new Error('commented out')",
      "throw new JwtGrpcError('ERR_FILE', 'fine');",
      "throw internalError('fine');",
      'class Mine extends Error {}',
    ].join('\n');
    expect(plainThrows('a.ts', text)).toEqual([
      "a.ts:1: if (a) throw new Error('x');",
      'a.ts:2: throw new TypeError(`y`);',
      "a.ts:3: return Promise.reject(new RangeError('z'));",
      "a.ts:4: setTimeout(() => reject(new Error('late')), 1);",
    ]);
    expect(errorClasses(text)).toEqual(['Mine']);
  });
});
