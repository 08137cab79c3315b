/**
 * Reads a JSON value against a JSON Schema (draft 2020-12), so that a document the package
 * ships a schema for is checked by that schema itself and by no second, hand-written copy of
 * its rules. Only the keywords the shipped schemas use are known; a schema with any other is
 * refused as jwt-grpc's own bug (`ERR_INTERNAL`) the first time it is read, rather than a
 * rule being skipped. A value that breaks the schema throws a {@link SchemaProblem} naming
 * the JSON path (`$.callers["dns:a"].subjects[0]`) and the rule, worded for a person:
 * `must be an integer of at least 1, got 0`.
 */
import { internalError } from '../base/assert.js';
import { nearestName } from '../base/nearest-name.js';
import { firstUnknownName } from '../base/unknown-name.js';

/** One node of a schema, as the shipped schemas write it. */
export interface JsonSchema {
  readonly type?: 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean';
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  /** `false`: no member beyond `properties`; a schema: every other member's value. */
  readonly additionalProperties?: false | JsonSchema;
  readonly propertyNames?: JsonSchema;
  readonly items?: JsonSchema;
  readonly minItems?: number;
  readonly uniqueItems?: boolean;
  readonly minLength?: number;
  readonly pattern?: string;
  readonly minimum?: number;
  readonly exclusiveMinimum?: number;
  readonly maximum?: number;
  /** `#/$defs/NAME` of the root schema. */
  readonly $ref?: string;
  readonly $defs?: Readonly<Record<string, JsonSchema>>;
  /** What a broken `pattern` means, as VS Code's JSON validation reads the same keyword. */
  readonly patternErrorMessage?: string;
  /** What a broken rule of this node means, in place of the generic wording. */
  readonly errorMessage?: string;
}

/** Annotations: they change no verdict. */
const ANNOTATIONS = new Set(['$schema', 'title', 'description']);
const KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
  'items',
  'minItems',
  'uniqueItems',
  'minLength',
  'pattern',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  '$ref',
  '$defs',
  'patternErrorMessage',
  'errorMessage',
]);

/** Where a value breaks its schema: the JSON path and what is wrong there. */
export class SchemaProblem extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * `path` followed by member `name`, as code would write it: `$.a`, or `$["dns:a"]` where the
 * name is no identifier.
 *
 * @example
 * ```ts
 * memberOf('$.callers', 'dns:a'); // '$.callers["dns:a"]'
 * ```
 */
export function memberOf(path: string, name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`;
}

/**
 * Checks `value` against `root` and returns a copy holding only what the schema declares:
 * objects with `properties` copied member by member, maps (`additionalProperties` a schema)
 * with no prototype, so a member named `__proto__` stays a member. Throws a
 * {@link SchemaProblem} at the first rule broken.
 *
 * @example
 * ```ts
 * const schema: JsonSchema = { type: 'object', required: ['port'], properties: { port: { type: 'integer', minimum: 1 } } };
 * readJson(schema, { port: 0 }); // throws SchemaProblem('$.port', 'must be an integer of at least 1, got 0')
 * ```
 */
export function readJson(root: JsonSchema, value: unknown): unknown {
  return read(root, root, value, '$');
}

function read(root: JsonSchema, schema: JsonSchema, value: unknown, path: string): unknown {
  for (const name of Object.keys(schema))
    if (!KEYWORDS.has(name) && !ANNOTATIONS.has(name)) throw internalError(`JSON Schema keyword ${name} at ${path} is not read`);
  if (schema.$ref !== undefined) return read(root, resolve(root, schema.$ref), value, path);
  const problem = (message: string) => new SchemaProblem(path, schema.errorMessage ?? message);
  switch (schema.type) {
    case 'object':
      return readObject(root, schema, value, path, problem);
    case 'array':
      return readArray(root, schema, value, path, problem);
    case 'string':
      return readString(schema, value, problem);
    case 'number':
    case 'integer':
      return readNumber(schema, value, problem);
    case 'boolean':
      if (typeof value !== 'boolean') throw problem('must be true or false');
      return value;
    default:
      throw internalError(`JSON Schema at ${path} has no type`);
  }
}

function resolve(root: JsonSchema, ref: string): JsonSchema {
  const name = /^#\/\$defs\/([^/]+)$/.exec(ref)?.[1];
  const target = name === undefined ? undefined : root.$defs?.[name];
  if (target === undefined) throw internalError(`JSON Schema $ref ${ref} names no $defs entry`);
  return target;
}

type Problem = (message: string) => SchemaProblem;

function readObject(root: JsonSchema, schema: JsonSchema, value: unknown, path: string, problem: Problem): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw problem('must be an object');
  const given = value as Record<string, unknown>;
  const declared = schema.properties ?? {};
  if (schema.additionalProperties === false) refuseUndeclared(given, Object.keys(declared), path);
  for (const name of schema.required ?? []) if (given[name] === undefined) throw new SchemaProblem(memberOf(path, name), 'is required');
  const out: Record<string, unknown> =
    schema.additionalProperties === undefined || schema.additionalProperties === false ? {} : Object.create(null);
  for (const [name, member] of Object.entries(declared))
    if (given[name] !== undefined) out[name] = read(root, member, given[name], memberOf(path, name));
  const rest = schema.additionalProperties;
  if (rest === undefined || rest === false) return out;
  for (const [name, member] of Object.entries(given)) {
    if (Object.hasOwn(declared, name)) continue;
    if (schema.propertyNames !== undefined) read(root, schema.propertyNames, name, memberOf(path, name));
    out[name] = read(root, rest, member, memberOf(path, name));
  }
  return out;
}

/**
 * Refuses a member the schema does not declare, with the nearest declared one when one is
 * close. Inherited and non-enumerable members count, as a reader of `value.name` would see
 * them (src/base/unknown-name.ts).
 */
function refuseUndeclared(value: object, declared: readonly string[], path: string): void {
  const name = firstUnknownName(value, declared);
  if (name === undefined) return;
  const nearest = nearestName(name, declared);
  const hint = nearest === undefined ? '' : `; did you mean ${memberOf(path, nearest)}?`;
  throw new SchemaProblem(memberOf(path, name), `is not a field (expected one of ${declared.join(', ')})${hint}`);
}

function readArray(root: JsonSchema, schema: JsonSchema, value: unknown, path: string, problem: Problem): unknown[] {
  if (!Array.isArray(value)) throw problem(`must be an array${itemsAreStrings(root, schema) ? ' of strings' : ''}`);
  const min = schema.minItems ?? 0;
  if (value.length < min) throw problem(`must hold at least ${min} ${min === 1 ? 'entry' : 'entries'}`);
  const items = value.map((item: unknown, index) =>
    schema.items === undefined ? item : read(root, schema.items, item, `${path}[${index}]`),
  );
  if (schema.uniqueItems === true) {
    const seen = new Map<string, number>();
    items.forEach((item, index) => {
      const text = JSON.stringify(item);
      const first = seen.get(text);
      if (first !== undefined) throw new SchemaProblem(`${path}[${index}]`, `${text} is listed before, at ${path}[${first}]`);
      seen.set(text, index);
    });
  }
  return items;
}

function itemsAreStrings(root: JsonSchema, schema: JsonSchema): boolean {
  const items = schema.items?.$ref === undefined ? schema.items : resolve(root, schema.items.$ref);
  return items?.type === 'string';
}

function readString(schema: JsonSchema, value: unknown, problem: Problem): string {
  const min = schema.minLength ?? 0;
  const wanted = min === 0 ? 'a string' : min === 1 ? 'a non-empty string' : `a string of at least ${min} characters`;
  if (typeof value !== 'string' || value.length < min) throw problem(`must be ${wanted}`);
  if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value))
    throw problem(`${JSON.stringify(value)}: ${schema.patternErrorMessage ?? `must match ${schema.pattern}`}`);
  return value;
}

function readNumber(schema: JsonSchema, value: unknown, problem: Problem): number {
  const { minimum, exclusiveMinimum, maximum } = schema;
  const fits =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (schema.type !== 'integer' || Number.isInteger(value)) &&
    (minimum === undefined || value >= minimum) &&
    (exclusiveMinimum === undefined || value > exclusiveMinimum) &&
    (maximum === undefined || value <= maximum);
  if (!fits) throw problem(`must be ${numberWanted(schema)}, got ${JSON.stringify(value)}`);
  return value as number;
}

/** `an integer from 1 to 10`, `a number above 0, at most 10`, `an integer of at least 1`. */
function numberWanted({ type, minimum, exclusiveMinimum, maximum }: JsonSchema): string {
  const kind = type === 'integer' ? 'an integer' : 'a number';
  if (minimum !== undefined && maximum !== undefined) return `${kind} from ${minimum} to ${maximum}`;
  const low = minimum !== undefined ? `of at least ${minimum}` : exclusiveMinimum !== undefined ? `above ${exclusiveMinimum}` : undefined;
  const high = maximum === undefined ? undefined : `at most ${maximum}`;
  return [kind, [low, high].filter((part) => part !== undefined).join(', ')].filter((part) => part !== '').join(' ');
}
