/**
 * node:util's parseArgs reads `--port -1` as a flag without its value followed by an
 * unknown option `-1`, and says so in three lines about ambiguity. A number, even a
 * negative one, is the flag's value: joined as `--port=-1`, it reaches the option's own
 * check, which says what the flag accepts.
 */
type FlagTypes = Readonly<Record<string, { readonly type: 'string' | 'boolean' }>>;

/**
 * `args` with each `--flag -NUMBER` of a string flag written `--flag=-NUMBER`.
 *
 * @example
 * ```ts
 * joinNegativeValues(['--port', '-1'], { port: { type: 'string' } }); // ['--port=-1']
 * ```
 */
export function joinNegativeValues(args: readonly string[], options: FlagTypes): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    const flag = /^--([^=]+)$/.exec(arg)?.[1];
    if (flag !== undefined && options[flag]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}
