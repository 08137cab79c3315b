/**
 * The one reading of which names an options object holds, for every guard that refuses an
 * unknown one: known-options.ts (the factories' options), tokens/claims.ts (a call's
 * `expect`) and the policy checker (policy/document.ts). A factory reads `options.audience`
 * through the prototype chain, whether it is enumerable or a getter, so every such name
 * counts as given: own or inherited, enumerable or not, up to the object's
 * `Object.prototype` (of any realm), whose members are no one's options.
 */

/** Whether `holder` is some realm's `Object.prototype`: the root of a chain that is its own constructor's prototype. */
function isObjectPrototype(holder: object): boolean {
  if (holder === Object.prototype) return true;
  if (Object.getPrototypeOf(holder) !== null) return false;
  const constructor = Object.getOwnPropertyDescriptor(holder, 'constructor')?.value as { prototype?: unknown } | undefined;
  return typeof constructor === 'function' && constructor.prototype === holder;
}

/**
 * The first string-keyed name `given` holds that is not in `known`: own or inherited,
 * enumerable or not, a value or a getter; undefined when there is none. A prototype's own
 * `constructor` is its class, not a name given.
 *
 * @example
 * ```ts
 * firstUnknownName(Object.create({ audiance: 'api' }), ['audience', 'issuer']); // 'audiance'
 * firstUnknownName({ audience: 'api' }, ['audience', 'issuer']); // undefined
 * ```
 */
export function firstUnknownName(given: object, known: readonly string[]): string | undefined {
  for (let holder: object | null = given; holder !== null && !isObjectPrototype(holder); holder = Object.getPrototypeOf(holder)) {
    for (const name of Object.getOwnPropertyNames(holder)) {
      if (!known.includes(name) && (holder === given || name !== 'constructor')) return name;
    }
  }
  return undefined;
}
