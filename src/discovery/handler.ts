import { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KeySet } from '../keys/key-set.js';
import { optionValue } from '../options/resolve.js';
import { optionNames, refuseUnknownOptions } from '../base/known-options.js';
import { CONFIGURATION_SUFFIX, JWKS_SUFFIX, type Representation, configurationDocument, issuerPath, jwksDocument } from './documents.js';
import { STATUS_LIST_RESIGN_FRACTION } from './defaults.js';
import { noneMatch, strongEtag } from '../documents/etag.js';

/**
 * Options of {@link jwksHandler}.
 *
 * @example
 * ```ts
 * const options: JwksHandlerOptions = { issuer: 'https://auth.example/tenant-a', maxAgeSeconds: 60 };
 * ```
 */
export interface JwksHandlerOptions {
  /**
   * The issuer, byte for byte as the tokens' `iss` (the server's `issuer` option): serves
   * `/.well-known/openid-configuration` (also under the issuer's path). Without it, only the JWK Set.
   */
  readonly issuer?: string;
  /** `Cache-Control: public, max-age=N` of both documents, 0 to 86400 seconds. Default 300. */
  readonly maxAgeSeconds?: number;
}

/** The names {@link JwksHandlerOptions} holds; an object with another is refused. */
const JWKS_HANDLER_OPTION_NAMES = optionNames<JwksHandlerOptions>({ issuer: true, maxAgeSeconds: true });

/**
 * Answers a request if it is for one of the documents (true), or leaves it untouched for
 * your own routing (false). Never reads a request body.
 *
 * @example
 * ```ts
 * // hidden: import { createServer } from 'node:http';
 * // hidden: declare const server: JwtServer;
 * const documents: JwksRequestHandler = jwksHandler(server.service, { issuer: 'https://auth.example' });
 * createServer((req, res) => documents(req, res) || res.writeHead(404).end());
 * ```
 */
export type JwksRequestHandler = (request: IncomingMessage, response: ServerResponse) => boolean;

/** What a path is, once the query is cut off. */
type Route = 'jwks' | 'configuration' | undefined;

/**
 * The Token Status List the discovery port also serves (draft-ietf-oauth-status-list-20
 * section 8.1: a GET of the `uri` in the tokens' `status` claim). @internal
 */
export interface StatusListRoute {
  /** The path of the lists' uris but their number, e.g. `/statuslists/`: list N is at `/statuslists/N`. */
  readonly prefix: string;
  /** The current Status List Token of the list at `path` (signed again by the issuer only when needed); undefined: no such list, 404. */
  readonly token: (path: string) => string | undefined;
  /** `Cache-Control: max-age` of the list (a quarter of its ttl: statusListRoute in src/server/create.ts says why). */
  readonly maxAgeSeconds: number;
}

/** A Token Status List as the handler serves it: what a StatusListIssuer (src/revocation/status-list/issuer.ts) has. @internal */
export interface ServedStatusList {
  /** The uri of the list new tokens go into: the others are numbered beside it. */
  readonly uri: string;
  readonly ttlSeconds: number;
  /** The signed list `uri` names; throws for a uri that is not one of its lists. */
  token(uri: string): string;
}

/**
 * The HTTP route of a status list: its uri's path. `Cache-Control: max-age` is a quarter
 * of the ttl, the age at which the issuer signs the list again, so a shared cache never
 * hands a verifier a list older than half its ttl (docs/status-list.md). @internal
 */
export function statusListRoute(list: ServedStatusList): StatusListRoute {
  const uri = new URL(list.uri);
  const prefix = uri.pathname.replace(/[0-9]+$/, '');
  return {
    prefix,
    token: (path) => {
      try {
        return list.token(`${uri.origin}${path}`);
      } catch {
        return undefined;
      }
    },
    maxAgeSeconds: Math.floor(list.ttlSeconds / STATUS_LIST_RESIGN_FRACTION),
  };
}

/** The most Status List documents kept (the issuer serves a bounded number of lists: MAX_LIVE_STATUS_LISTS). */
const MAX_LIST_DOCUMENTS = 256;

/** The media type of section 8.2 for a Status List Token in JWT format. */
const STATUS_LIST_CONTENT_TYPE = 'application/statuslist+jwt';

function routes(path: string | undefined, withConfiguration: boolean): Map<string, Route> {
  const map = new Map<string, Route>([[JWKS_SUFFIX, 'jwks']]);
  if (path !== undefined && path !== '') map.set(`${path}${JWKS_SUFFIX}`, 'jwks');
  if (withConfiguration) {
    map.set(CONFIGURATION_SUFFIX, 'configuration');
    if (path !== undefined && path !== '') map.set(`${path}${CONFIGURATION_SUFFIX}`, 'configuration');
  }
  return map;
}

/** The path of a request target without its query; node:http hands the raw target. */
function pathOf(url: string | undefined): string {
  const target = url ?? '';
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

/**
 * Sends `document` for GET and HEAD, 304 when `If-None-Match` matches its ETag, 405
 * otherwise. A request body is never read: node:http closes the connection of a request
 * whose body is left unread once the answer is sent, instead of draining it. @internal
 */
export function sendDocument(
  request: IncomingMessage,
  response: ServerResponse,
  document: Representation,
  cacheControl: string,
  contentType = 'application/json',
): void {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed: GET or HEAD\n');
    return;
  }
  const headers = { etag: document.etag, 'cache-control': cacheControl };
  const ifNoneMatch = request.headers['if-none-match'];
  if (noneMatch(ifNoneMatch, document.etag)) {
    response.writeHead(304, headers).end();
    return;
  }
  response.writeHead(200, { ...headers, 'content-type': contentType, 'content-length': document.body.length });
  response.end(request.method === 'HEAD' ? undefined : document.body);
}

/**
 * The documents of keys that `currentKeys` reads at each request (with `tokenEndpoint`, the
 * configuration announces the token endpoint of token exchange), rebuilt only when the
 * key set changes (a reload or rotation swaps the KeySet): the ETag follows at once. @internal
 */
export function documentsHandler(
  currentKeys: () => KeySet,
  options: JwksHandlerOptions = {},
  currentStatusList: () => StatusListRoute | undefined = () => undefined,
  tokenEndpoint = false,
): JwksRequestHandler {
  const issuer = options.issuer;
  const path = issuer === undefined ? undefined : issuerPath(issuer);
  const maxAge = optionValue('httpMaxAgeSeconds', options.maxAgeSeconds, 'maxAgeSeconds');
  const cacheControl = `public, max-age=${maxAge}`;
  const table = routes(path, issuer !== undefined);

  // Each list's bytes and ETag, rebuilt when the issuer hands out another token of it; as many as the issuer serves lists.
  const lists = new Map<string, { token: string; document: Representation }>();
  const listDocument = (path: string, token: string): Representation => {
    let list = lists.get(path);
    if (list?.token !== token) {
      const body = Buffer.from(token);
      list = { token, document: { body, etag: strongEtag(body) } };
      if (!lists.has(path) && lists.size >= MAX_LIST_DOCUMENTS) lists.delete(lists.keys().next().value as string);
      lists.set(path, list);
    }
    return list.document;
  };
  const isListPath = (statusList: StatusListRoute | undefined, path: string): statusList is StatusListRoute =>
    statusList !== undefined && path.startsWith(statusList.prefix) && /^[1-9][0-9]{0,9}$/.test(path.slice(statusList.prefix.length));
  let built: { keys: KeySet; jwks: Representation; configuration: Representation | undefined } | undefined;
  const documents = (): NonNullable<typeof built> => {
    const keys = currentKeys();
    if (built?.keys !== keys) {
      built = {
        keys,
        jwks: jwksDocument(keys),
        configuration: issuer === undefined ? undefined : configurationDocument(issuer, keys, tokenEndpoint),
      };
    }
    return built;
  };
  return (request, response) => {
    const path = pathOf(request.url);
    const route = table.get(path);
    if (route === undefined) {
      const statusList = currentStatusList();
      const token = isListPath(statusList, path) ? statusList.token(path) : undefined;
      if (token === undefined) return false;
      const cacheControl = `public, max-age=${(statusList as StatusListRoute).maxAgeSeconds}`;
      sendDocument(request, response, listDocument(path, token), cacheControl, STATUS_LIST_CONTENT_TYPE);
      return true;
    }
    const current = documents();
    sendDocument(request, response, route === 'jwks' ? current.jwks : (current.configuration as Representation), cacheControl);
    return true;
  };
}

/**
 * A request handler serving a JwtService's public JWK Set at `/.well-known/jwks.json` and,
 * with `issuer`, its OpenID discovery document at `/.well-known/openid-configuration` (and
 * both under the issuer's path), for your own node:http, express or fastify server. A
 * service with a Token Status List (`statusList` on createJwtServer or addJwtService) has
 * its lists served too, at the `uri` its tokens' `status` claim names (ISSUER/statuslists/N):
 * remote verifiers read revocations there. It
 * follows key reloads and rotation at once; strong ETags, `If-None-Match` -> 304,
 * `Cache-Control`, HEAD, 405 on other methods. It returns false for any other path.
 * Options are validated here (`JwtGrpcError` `ERR_INVALID_OPTION`).
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createJwtServer } from 'jwt-grpc';
 * import { jwksHandler } from 'jwt-grpc/discovery';
 * import { generateKeys } from 'jwt-grpc/keys';
 *
 * const keys = await generateKeys({ algorithms: ['ES256'] });
 * const jwt = createJwtServer({ keys, issuer: 'https://auth.example' });
 * await jwt.listen('0.0.0.0:50051');
 * const documents = jwksHandler(jwt.service, { issuer: 'https://auth.example' });
 * createServer((req, res) => {
 *   if (!documents(req, res)) res.writeHead(404).end();
 * }).listen(8080);
 * // fastify: app.get('/.well-known/*', (req, reply) => { reply.hijack(); documents(req.raw, reply.raw); });
 * ```
 */
export function jwksHandler(
  service: { readonly keys: KeySet; readonly statusList?: ServedStatusList | undefined },
  options: JwksHandlerOptions = {},
): JwksRequestHandler {
  refuseUnknownOptions(options, JWKS_HANDLER_OPTION_NAMES, { owner: 'jwksHandler' });
  // Read at each request: addJwtService's list exists once its revocations have loaded.
  let served: { list: ServedStatusList; route: StatusListRoute } | undefined;
  const statusList = (): StatusListRoute | undefined => {
    const list = service.statusList;
    if (list !== undefined && served?.list !== list) served = { list, route: statusListRoute(list) };
    return list === undefined ? undefined : served?.route;
  };
  return documentsHandler(() => service.keys, options, statusList);
}
