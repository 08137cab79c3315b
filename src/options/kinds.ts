import { availableParallelism } from 'node:os';
import { delimiter } from 'node:path';
import type { TracerProvider } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import { promClient } from '../base/optional-deps.js';
import { JwtGrpcError, invalidOption } from '../base/errors.js';
import { refuseUnknownOptions } from '../base/known-options.js';
import { KeySet } from '../keys/key-set.js';
import { checkDirectories } from '../keys/backends/pkcs11-custody.js';
import type { Logger } from '../base/log.js';
import { type JwtPolicy, checkPolicy } from '../policy/document.js';
import type { RevocationStore } from '../contracts/revocation-store.js';
import { type CallInterceptor, interceptorsProblem } from '../contracts/handler-api.js';

/**
 * What kind of value an option holds: how a value given in code is checked, how
 * command-line or environment text is read, and how documentation writes it. Errors
 * name the option by `label`: the library's name in code, `--flag` on the command line.
 */
export interface OptionKind<In, Out = In> {
  /** Checks a value given in code and returns it as the library uses it. */
  check(value: unknown, label: string): Out;
  /** Reads command-line or environment text; absent where the CLI takes no text for it. */
  readonly parse?: (text: string, label: string) => In;
  /** A value as documentation writes it. */
  show(value: In): string;
  /** A value as the command line writes it, where that differs from `show`. */
  readonly showAsText?: (value: In) => string;
  /** The accepted values as documentation writes them; '' when the type says it all. */
  readonly range: string;
  /** What follows the flag in --help (`SECONDS`, `FILE`); '' for a flag that takes no value. */
  readonly placeholder: string;
}

/** A kind the command line can give as text. */
export type TextKind<In, Out = In> = OptionKind<In, Out> & { readonly parse: (text: string, label: string) => In };

/** An integer from `min` to `max`: one rule for every count, size and duration (no fractions). */
export function integer(min: number, max: number, placeholder = 'N'): TextKind<number> {
  const rule = `must be an integer from ${min} to ${max}`;
  const inRange = (value: number): boolean => Number.isInteger(value) && value >= min && value <= max;
  return {
    check(value, label) {
      if (typeof value !== 'number' || !inRange(value)) throw invalidOption(label, `${rule}, got ${JSON.stringify(value)}`);
      return value;
    },
    parse(text, label) {
      const digits = text.trim();
      if (!/^\d+$/.test(digits) || !inRange(Number(digits))) throw invalidOption(label, `${rule}, got ${JSON.stringify(text)}`);
      return Number(digits);
    },
    show: String,
    range: `${min}-${max}`,
    placeholder,
  };
}

/** True or false; in text `1`/`true`/`yes` or `0`/`false`/`no` (any case), as environment variables are written. */
export const flag: TextKind<boolean> = {
  check(value, label) {
    if (typeof value !== 'boolean') throw invalidOption(label, `must be true or false, got ${JSON.stringify(value)}`);
    return value;
  },
  parse(text, label) {
    if (/^(1|true|yes)$/i.test(text)) return true;
    if (/^(0|false|no|)$/i.test(text)) return false;
    throw invalidOption(label, `must be true or false, got ${JSON.stringify(text)}`);
  },
  show: String,
  range: '',
  placeholder: '',
};

/** A non-empty string (a host, an issuer, a file path). */
export function text(placeholder = 'VALUE'): TextKind<string> {
  const check = (value: unknown, label: string): string => {
    if (typeof value !== 'string' || value.length === 0) throw invalidOption(label, 'must be a non-empty string');
    return value;
  };
  return { check, parse: check, show: (value) => value, range: '', placeholder };
}

/** One of a fixed list of strings. */
export function choice<const T extends string>(values: readonly T[]): TextKind<T> {
  const check = (value: unknown, label: string): T => {
    if (!values.includes(value as T)) throw invalidOption(label, `must be one of ${values.join(', ')}, got ${JSON.stringify(value)}`);
    return value as T;
  };
  return { check, parse: check, show: (value) => value, range: values.join(', '), placeholder: values.join('|') };
}

/**
 * A list of absolute directories, each written in its shortest form (no `.`, `..`, `//` or
 * trailing `/`, so that "inside this directory" is a plain prefix test); on the command line
 * separated by `:`, as PATH and LD_LIBRARY_PATH are.
 */
export const directories: TextKind<readonly string[]> = {
  check: checkDirectories,
  parse: (text, label) => directories.check(text.split(delimiter), label),
  show: (value) => value.join(delimiter),
  range: '',
  placeholder: 'DIR:DIR',
};

/** A list of non-empty strings (the CLI reads it from a JSON file). */
export const strings: OptionKind<readonly string[]> = {
  check(value, label) {
    if (!Array.isArray(value)) throw invalidOption(label, 'must be an array of strings');
    value.forEach((entry: unknown, index) => {
      if (typeof entry !== 'string' || entry.length === 0) throw invalidOption(label, `entry ${index} must be a non-empty string`);
    });
    return value as readonly string[];
  },
  show: (value) => JSON.stringify(value),
  range: '',
  placeholder: '',
};

/**
 * A non-empty list of distinct values of a fixed set; on the command line separated by
 * commas (`grpc,connect`).
 */
export function choices<const T extends string>(values: readonly T[]): TextKind<readonly T[]> {
  const check = (value: unknown, label: string): readonly T[] => {
    if (!Array.isArray(value) || value.length === 0) throw invalidOption(label, `must be a non-empty array of ${values.join(', ')}`);
    value.forEach((entry: unknown, index) => {
      if (!values.includes(entry as T))
        throw invalidOption(label, `entry ${index} must be one of ${values.join(', ')}, got ${JSON.stringify(entry)}`);
      if (value.indexOf(entry) !== index) throw invalidOption(label, `names ${JSON.stringify(entry)} twice`);
    });
    return value as readonly T[];
  };
  return {
    check,
    parse: (text, label) =>
      check(
        text.split(',').map((part) => part.trim()),
        label,
      ),
    show: (value) => value.join(','),
    range: values.join(', '),
    placeholder: values.join(','),
  };
}

/**
 * A list of web origins (RFC 6454 section 6.1: `scheme://host[:port]`, as a browser sends
 * them in `Origin`: lower case, no path, no default port); on the command line separated
 * by commas. An empty list names none.
 */
export const origins: TextKind<readonly string[]> = {
  check(value, label) {
    if (!Array.isArray(value)) throw invalidOption(label, 'must be an array of origins (https://app.example)');
    value.forEach((entry: unknown, index) => {
      if (typeof entry !== 'string' || !isSerializedOrigin(entry)) {
        throw invalidOption(
          label,
          `entry ${index} must be an origin as browsers send it (https://app.example, http://localhost:8080), got ${JSON.stringify(entry)}`,
        );
      }
    });
    return value as readonly string[];
  },
  parse: (text, label) =>
    origins.check(
      text
        .split(',')
        .map((part) => part.trim())
        .filter((part) => part.length > 0),
      label,
    ),
  show: (value) => value.join(','),
  range: '',
  placeholder: 'ORIGIN,ORIGIN',
};

/** True for an origin exactly as the URL standard serializes it (what `Origin` carries), and nothing looser. */
function isSerializedOrigin(text: string): boolean {
  if (!/^https?:\/\/[^/?#]+$/.test(text)) return false;
  try {
    return new URL(text).origin === text;
  } catch {
    return false;
  }
}

/** The one name a cache's options hold. */
const CACHE_OPTION_NAMES = ['maxEntries'];

/**
 * A bounded cache: `{ maxEntries }` in code, a number on the command line; `false` and
 * `{ maxEntries: 0 }` (0 on the command line) both turn it off. Resolves to the number of entries.
 */
export function cacheSize(max: number): TextKind<{ readonly maxEntries: number } | false, number> {
  const entries = integer(0, max);
  return {
    check(value, label) {
      if (value === false) return 0;
      if (typeof value !== 'object' || value === null) throw invalidOption(label, 'must be { maxEntries } or false');
      refuseUnknownOptions(value, CACHE_OPTION_NAMES, { path: label });
      return entries.check((value as { maxEntries?: unknown }).maxEntries, `${label}.maxEntries`);
    },
    parse: (text, label) => ({ maxEntries: entries.parse(text, label) }),
    show: (value) => (value === false ? 'false' : `{ maxEntries: ${value.maxEntries} }`),
    showAsText: (value) => String(value === false ? 0 : value.maxEntries),
    range: `0-${max}`,
    placeholder: 'N',
  };
}

/** A number of worker processes; in text also `max`, one per available core. */
export function workerCount(max: number): TextKind<number> {
  const count = integer(1, max);
  return {
    ...count,
    parse(text, label) {
      if (text.trim() === 'max') return availableParallelism();
      try {
        return count.parse(text, label);
      } catch {
        throw invalidOption(label, `must be an integer from 1 to ${max} or "max", got ${JSON.stringify(text)}`);
      }
    },
    range: `1-${max} or max`,
  };
}

/** A value of a type only code can give (an object, a function): `check` says what is wrong, or undefined. */
export function codeOnly<T>(check: (value: unknown) => string | undefined): OptionKind<T> {
  return {
    check(value, label) {
      const problem = check(value);
      if (problem !== undefined) throw invalidOption(label, problem);
      return value as T;
    },
    show: () => '',
    range: '',
    placeholder: '',
  };
}

/** A {@link Logger}: an object with info, warn and error functions. */
export const logger = codeOnly<Logger>((value) =>
  ['info', 'warn', 'error'].every((method) => typeof (value as Record<string, unknown> | null)?.[method] === 'function')
    ? undefined
    : 'must be a Logger: an object with info, warn and error functions',
);

/** Server interceptors (src/contracts/handler-api.ts): an array of `{ onCallStart?, onCallEnd? }`. */
export const interceptors = codeOnly<readonly CallInterceptor[]>(interceptorsProblem);

/** The `policy` option's kind: checked once at start, on the command line read from a JSON file (src/policy/document.ts). */
export const policyKind: OptionKind<JwtPolicy> = {
  check: (value, label) => checkPolicy(value, `option ${label}`),
  show: () => 'a policy',
  range: '',
  placeholder: '',
};

/** A prom-client `Registry` (an `AggregatorRegistry` is one too). */
export const metricsRegistry = codeOnly<Registry>((value) =>
  value instanceof promClient().Registry ? undefined : 'must be a prom-client Registry',
);

/**
 * Tracing: `true` (in text as a {@link flag}) for jwt-grpc's own OpenTelemetry pipeline,
 * configured by the OTEL_* variables, or a TracerProvider of the embedding service.
 */
export const tracing: TextKind<boolean | TracerProvider> = {
  check(value, label) {
    if (typeof value === 'boolean') return value;
    if (typeof (value as { getTracer?: unknown } | null)?.getTracer === 'function') return value as TracerProvider;
    throw invalidOption(label, 'must be true, false or an OpenTelemetry TracerProvider');
  },
  parse: flag.parse,
  show: (value) => (typeof value === 'boolean' ? String(value) : ''),
  range: '',
  placeholder: '',
};

/** A plain object of settings handed on as they are (grpc-js channel options). */
export function record<T extends object>(): OptionKind<T> {
  return codeOnly<T>((value) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? undefined : 'must be an object'));
}

/** A KeySet with at least one key that signs: what a service needs to answer GenerateJwt. */
export const signingKeys: OptionKind<KeySet> = {
  check(value, label) {
    if (!(value instanceof KeySet)) throw invalidOption(label, 'must be a KeySet from loadKeys, generateKeys or importKeys');
    if (value.signingAlgorithms.length === 0) {
      throw new JwtGrpcError('ERR_INVALID_KEY', `option ${label}: no key can sign (all are verify-only)`, { field: label });
    }
    return value;
  },
  show: () => '',
  range: '',
  placeholder: '',
};

/** The URL schemes a revocation store may be named by on the command line. */
const STORE_SCHEMES = ['redis:', 'rediss:'];

/** A URL with its password (`//user:password@`) masked, for messages and documentation. */
const maskUrl = (url: string): string => url.replace(/\/\/[^@/]*@/, '//***@');

/** A redis:// or rediss:// URL, or an object with the members of a {@link RevocationStore}. */
function checkRevocationStore(value: unknown, label: string): string | RevocationStore {
  if (typeof value === 'string') {
    let scheme: string | undefined;
    try {
      scheme = new URL(value).protocol;
    } catch {
      scheme = undefined;
    }
    if (scheme === undefined || !STORE_SCHEMES.includes(scheme))
      throw invalidOption(label, `must be a redis:// or rediss:// URL, got ${JSON.stringify(maskUrl(value))}`);
    return value;
  }
  const store = value as Partial<RevocationStore> | null;
  if (
    typeof store?.start === 'function' &&
    typeof store.add === 'function' &&
    typeof store.close === 'function' &&
    typeof store.kind === 'string'
  ) {
    return value as RevocationStore;
  }
  throw invalidOption(label, 'must be a redis:// URL or a RevocationStore (kind, start, add, up, close)');
}

/**
 * Where revocations are shared between replicas: a Redis URL (`redis://HOST:PORT`,
 * `rediss://` for TLS), or in code a {@link RevocationStore} of your own.
 */
export const revocationStore: TextKind<string | RevocationStore> = {
  check: checkRevocationStore,
  parse: (text, label) => checkRevocationStore(text, label) as string,
  // A URL may carry a password: documentation and errors never show it.
  show: (value) => (typeof value === 'string' ? maskUrl(value) : `a ${value.kind} store`),
  range: '',
  placeholder: 'URL',
};
