/** The instrumentation scope of jwt-grpc's spans (the tracer name a backend groups them by). */
export const TRACER_NAME = 'jwt-grpc';

/** `/pkg.Service/Method` as its service and method; a path without a second slash is all method. */
export function splitPath(path: string): { service: string; method: string } {
  const slash = path.indexOf('/', 1);
  return slash < 0 ? { service: '', method: path.slice(1) } : { service: path.slice(1, slash), method: path.slice(slash + 1) };
}
