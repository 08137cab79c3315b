/**
 * A rule of jwtAuthInterceptor that names no served method protects nothing: a rule for
 * `/demo.Greeter/SayHello` on a server whose method is `Hello` would leave `Hello` to any
 * valid token. Where the server knows what it serves (createJwtServer, at listen), such a
 * path is refused, naming the method it most likely meant.
 */
import { invalidOption } from '../base/errors.js';

/** Edit distance of two strings (Levenshtein), in one row of memory. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** The served method closest to `path`, for the error's hint; undefined when nothing is served. */
export function nearestMethod(path: string, served: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const method of served) {
    const d = distance(path, method);
    if (d < bestDistance) [best, bestDistance] = [method, d];
  }
  return best;
}

/**
 * Throws ERR_INVALID_OPTION for the first of `paths` (named by `field(path)`) that is not
 * among `served`, naming the nearest served method. @internal
 */
export function refuseUnservedPaths(paths: Iterable<string>, served: ReadonlySet<string>, field: (path: string) => string): void {
  for (const path of paths) {
    if (served.has(path)) continue;
    const nearest = nearestMethod(path, served);
    const hint = nearest === undefined ? 'the server serves no method' : `the nearest served method is ${JSON.stringify(nearest)}`;
    throw invalidOption(
      field(path),
      `${JSON.stringify(path)} names no method this server serves (${hint}); a rule that matches nothing protects nothing`,
    );
  }
}
