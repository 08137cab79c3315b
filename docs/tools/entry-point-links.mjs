// A TypeDoc plugin: resolves a bare {@link name} to the entry point that exports `name`.
// The API has one module per entry point (jwt-grpc, jwt-grpc/client, ...), and TypeDoc
// looks a bare name up in the linking comment's own module only, so a comment in one
// (createRemoteVerifier's) linking a name of another (createVerifier) would not resolve.
// An export lives in exactly one entry point (test/package/entry-points.integration.test.ts),
// so a bare name means one thing; one that two modules export is left unresolved, and
// fails the build as before (validation.invalidLink).
import { ReflectionKind } from 'typedoc';

/** The reflection `path` names below `start` (`Verifier.verify`: Verifier's member verify). */
function walk(start, path) {
  let found = start;
  for (const component of path) found = found?.children?.find((child) => child.name === component.path);
  return found;
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.addUnknownSymbolResolver((ref, reflection) => {
    const path = ref.symbolReference?.path;
    if (ref.moduleSource !== undefined || path === undefined || path.length === 0) return undefined;
    const modules = (reflection.project.children ?? []).filter((child) => child.kindOf(ReflectionKind.Module));
    const targets = modules.map((module) => walk(module, path)).filter((target) => target !== undefined);
    // TypeDoc takes an object's target as the link's target: a reflection links within the reference.
    return targets.length === 1 ? { target: targets[0], caption: targets[0].name } : undefined;
  });
}
