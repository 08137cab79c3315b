/**
 * No option is silently ignored: every factory that takes an options object checks its
 * names against the list declared beside its interface, at every level (`cache`, `tls`,
 * `server`, `methods[path]`), and refuses an unknown one with `ERR_INVALID_OPTION` naming
 * it by its full path and, when one is close, the name that was probably meant.
 * TypeScript catches a misspelt object literal, but not options from a spread, a
 * configuration file or plain JavaScript, and a misspelt `audience` or `issuer` would
 * otherwise turn a check off without a word (serde's deny_unknown_fields is the model).
 *
 * Adding an option: one line in its list. Lists declared with {@link optionNames} are
 * checked by the compiler against the interface, so a member added to the interface and
 * not to the list (or the reverse) does not compile.
 */
import { JwtGrpcError, type JwtGrpcErrorCode } from './errors.js';
import { nearestName } from './nearest-name.js';
import { firstUnknownName } from './unknown-name.js';

export { editDistance, nearestName } from './nearest-name.js';

/** The names an options object may hold. */
export type OptionNames = readonly string[];

/**
 * The names of `T`'s members, each given once as `name: true`; the compiler refuses a list
 * that lacks a member of `T` or names one `T` lacks.
 *
 * @example
 * ```ts
 * const NAMES = optionNames<{ readonly level?: string; readonly format?: string }>({ level: true, format: true });
 * ```
 */
export function optionNames<T>(names: { readonly [K in keyof T]-?: true }): OptionNames {
  return Object.freeze(Object.keys(names));
}

/** How a refusal reads: where the object sits, what owns it, and names that belong elsewhere. */
export interface UnknownOptionContext {
  /** The object's own path (`cache`, `server`, `methods["/pkg.Svc/Method"]`); absent at the top level. */
  readonly path?: string;
  /** What takes the object, for the message (`createVerifier`, `listen's tls`). */
  readonly owner?: string;
  /** Names known elsewhere, with a hint saying where they go instead of "did you mean". */
  readonly elsewhere?: (name: string) => string | undefined;
  /** The error code: ERR_INVALID_OPTION unless the object is not options (a key file's JWK: ERR_INVALID_KEY). */
  readonly code?: JwtGrpcErrorCode;
  /** What the name is not, in the message. Default `an option`. */
  readonly noun?: string;
}

/** `path.name`, or `path["name"]` for a name that is not an identifier. */
export function memberPath(path: string | undefined, name: string): string {
  if (path === undefined || path === '') return name;
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`;
}

/**
 * Throws when `given` holds a name not in `known`: own or inherited, enumerable or not, as
 * the factory would read it ({@link firstUnknownName}). Anything not an object is left to
 * the caller's own check (which names it better: "must be an object").
 */
export function refuseUnknownOptions(given: unknown, known: OptionNames, context: UnknownOptionContext = {}): void {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) return;
  const name = firstUnknownName(given, known);
  if (name !== undefined) throw unknownOption(name, known, context);
}

function unknownOption(name: string, known: OptionNames, context: UnknownOptionContext): JwtGrpcError {
  const field = memberPath(context.path, name);
  const of = context.owner === undefined ? '' : ` of ${context.owner}`;
  const elsewhere = context.elsewhere?.(name);
  const nearest = elsewhere === undefined ? nearestName(name, known) : undefined;
  const hint =
    elsewhere ?? (nearest === undefined ? `known: ${known.join(', ') || 'none'}` : `did you mean ${memberPath(context.path, nearest)}?`);
  const code = context.code ?? 'ERR_INVALID_OPTION';
  const subject = code === 'ERR_INVALID_OPTION' ? 'option ' : '';
  return new JwtGrpcError(code, `${subject}${field}: is not ${context.noun ?? 'an option'}${of}; ${hint}`, { field });
}
