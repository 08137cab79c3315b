import { JwtGrpcError } from '../../base/errors.js';
import type { Handler, MethodDescriptor, ServiceDescriptor, ServiceImplementation } from '../../contracts/handler-api.js';

/** The four call kinds, from a method's requestStream / responseStream. */
export type CallKind = 'unary' | 'server-stream' | 'client-stream' | 'bidi';

/** One served method: what `:path` maps to. */
export interface Route {
  readonly path: string;
  readonly kind: CallKind;
  readonly definition: MethodDescriptor<unknown, unknown>;
  readonly handler: Handler;
}

function kindOf(method: MethodDescriptor<unknown, unknown>): CallKind {
  if (method.requestStream) return method.responseStream ? 'bidi' : 'client-stream';
  return method.responseStream ? 'server-stream' : 'unary';
}

function invalidService(message: string): JwtGrpcError {
  return new JwtGrpcError('ERR_INVALID_OPTION', `addService: ${message}`, { field: 'implementation' });
}

/** `:path` to method, and the names of the services served (to tell an unknown service from an unknown method). */
export class Router {
  readonly #routes = new Map<string, Route>();
  readonly #services = new Set<string>();

  /** Adds every method of `definition`; throws naming the method when a handler is missing or a path is served twice. */
  add(definition: ServiceDescriptor, implementation: ServiceImplementation): void {
    if (typeof definition !== 'object' || definition === null) throw invalidService('definition must be a service definition object');
    if (typeof implementation !== 'object' || implementation === null) throw invalidService('implementation must be an object of handlers');
    const routes: Route[] = [];
    for (const [name, method] of Object.entries(definition)) {
      const path = method?.path;
      if (typeof path !== 'string' || !/^\/[^/]+\/[^/]+$/.test(path))
        throw invalidService(`method ${name} has no valid path ("/package.Service/Method")`);
      if (typeof method.requestDeserialize !== 'function' || typeof method.responseSerialize !== 'function') {
        throw invalidService(`method ${path} lacks requestDeserialize or responseSerialize`);
      }
      const handler = implementation[name];
      if (typeof handler !== 'function') throw invalidService(`no handler for ${path} (implementation.${name})`);
      if (this.#routes.has(path)) throw invalidService(`${path} is already served`);
      routes.push({ path, kind: kindOf(method), definition: method, handler });
    }
    for (const route of routes) {
      this.#routes.set(route.path, route);
      this.#services.add(serviceOf(route.path));
    }
  }

  get(path: string | undefined): Route | undefined {
    return path === undefined ? undefined : this.#routes.get(path);
  }

  /** The UNIMPLEMENTED message for a path no route serves. */
  unknownPathMessage(path: string | undefined): string {
    if (path === undefined || !/^\/[^/]+\/[^/]+$/.test(path)) return `malformed method path ${JSON.stringify(path ?? '')}`;
    const service = serviceOf(path);
    if (!this.#services.has(service)) return `unknown service ${service} (method ${path})`;
    return `unknown method ${path.slice(service.length + 2)} of service ${service}`;
  }
}

/** `/package.Service/Method` -> `package.Service`. */
function serviceOf(path: string): string {
  return path.slice(1, path.indexOf('/', 1));
}
