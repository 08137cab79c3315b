/**
 * Reading options through the table: a default when one is absent, the kind's check when
 * one is given, errors naming the option as the caller knows it.
 */
import { invalidOption } from '../base/errors.js';
import { type UnknownOptionContext, refuseUnknownOptions } from '../base/known-options.js';
import type { OptionKind } from './kinds.js';
import { type InOf, OPTIONS, type OptionGroup, type OptionName, type OptionRow, type Options } from './table.js';

/** The names of a group's options. */
export type NamesIn<G extends OptionGroup> = { [K in OptionName]: Options[K]['group'] extends G ? K : never }[OptionName];

/** An option's value as code gives it. */
export type GivenValue<K extends OptionName> = InOf<Options[K]['kind']>;

/** An option's value once resolved: its default filled in (when it has one), in the form the library uses. */
export type ResolvedValue<K extends OptionName> =
  Options[K]['kind'] extends OptionKind<infer _In, infer Out>
    ? Options[K] extends OptionRow<OptionGroup, Options[K]['kind'], infer D>
      ? [D] extends [undefined]
        ? Out | undefined
        : Out
      : never
    : never;

/** A group's options as code gives them, each optional. */
export type GivenOptions<G extends OptionGroup> = { readonly [K in NamesIn<G>]?: GivenValue<K> };

/** A group's options once resolved. */
export type ResolvedOptions<G extends OptionGroup> = { readonly [K in NamesIn<G>]: ResolvedValue<K> };

/**
 * `true` when interface `I` declares exactly the options of group `G`, with their value
 * types, else `false`; asserted with {@link Expect} beside each public options interface.
 */
export type DeclaresGroup<I, G extends OptionGroup> = [Required<I>] extends [Required<GivenOptions<G>>]
  ? [Required<GivenOptions<G>>] extends [Required<I>]
    ? [Exclude<keyof I, NamesIn<G>> | Exclude<NamesIn<G>, keyof I>] extends [never]
      ? true
      : false
    : false
  : false;

/** Compiles only when `T` is `true`. */
export type Expect<T extends true> = T;

/** Names an option in an error message. */
export type Label = (name: OptionName) => string;

/** In code: the option's own name (`defaultTtlSeconds`). */
export const libraryLabel: Label = (name) => name;

/** On the command line: its flag (`--ttl`), or its environment variable when it has no flag. */
export const cliLabel: Label = (name) => {
  const cli = OPTIONS[name].cli;
  return cli?.flag !== undefined ? `--${cli.flag}` : (cli?.env ?? name);
};

/** The names of a group's options, in table order. */
export function namesIn<G extends OptionGroup>(group: G): NamesIn<G>[] {
  return (Object.keys(OPTIONS) as OptionName[]).filter((name) => OPTIONS[name].group === group) as NamesIn<G>[];
}

/** One option: its default when `value` is absent, else `value` checked by its kind. */
export function optionValue<K extends OptionName>(name: K, value: unknown, label: string = name): ResolvedValue<K> {
  const row: OptionRow = OPTIONS[name];
  const given = value ?? row.default;
  return (given === undefined ? undefined : row.kind.check(given, label)) as ResolvedValue<K>;
}

/** Every option of a group, from an object that may hold others too. */
export function resolveOptions<G extends OptionGroup>(
  group: G,
  given: object,
  label: Label = libraryLabel,
  names: readonly NamesIn<G>[] = namesIn(group),
): ResolvedOptions<G> {
  const values = given as Readonly<Record<string, unknown>>;
  const resolved: Record<string, unknown> = {};
  for (const name of names) resolved[name] = optionValue(name, values[name], label(name));
  return resolved as ResolvedOptions<G>;
}

/** How {@link resolveGroups} reads a factory's options object. */
export interface GroupsReading extends Pick<UnknownOptionContext, 'owner' | 'path' | 'elsewhere'> {
  /** Names the object may hold beside the groups' options, read by the factory itself (`keys`). */
  readonly also?: readonly string[];
  /** How errors name an option: as code does, unless the command line reads it. */
  readonly label?: Label;
  /**
   * Of a group, only these of its options: the rest are refused as unknown names and left
   * out of the result (addJwtService takes the server group's revocation store options only).
   */
  readonly only?: { readonly [K in OptionGroup]?: readonly NamesIn<K>[] };
}

/**
 * A factory's options in one pass through the table: the object checked to be one, a name
 * that is none of `groups`' options (nor `also`) refused, then every option of every group
 * read once, its default filled in. What the factory does next only reads the result.
 *
 * @example
 * ```ts
 * const { service, server } = resolveGroups(['service', 'server'], options, { owner: 'createJwtServer', also: ['keys'] });
 * ```
 */
export function resolveGroups<G extends OptionGroup>(
  groups: readonly G[],
  given: unknown,
  reading: GroupsReading = {},
): { readonly [K in G]: ResolvedOptions<K> } {
  if (typeof given !== 'object' || given === null) throw invalidOption(reading.path ?? 'options', 'must be an object');
  const { also = [], label = libraryLabel, only = {}, ...context } = reading;
  const names = (group: G): readonly NamesIn<G>[] => (only[group] as readonly NamesIn<G>[] | undefined) ?? namesIn(group);
  refuseUnknownOptions(given, [...also, ...groups.flatMap(names)], context);
  const resolved: Partial<Record<G, unknown>> = {};
  for (const group of groups) resolved[group] = resolveOptions(group, given, label, names(group));
  return resolved as { readonly [K in G]: ResolvedOptions<K> };
}

/** An option's default as documentation writes it: `7200`, `{ maxEntries: 10000 }`, `never`, `none`. */
export function defaultText(name: OptionName): string {
  const row: OptionRow = OPTIONS[name];
  return row.defaultText ?? (row.default === undefined ? 'none' : row.kind.show(row.default));
}
