/**
 * The OAuth 2.0 token endpoint of the discovery port: `POST /token` with the token-exchange
 * grant (RFC 8693 section 2.1, form-encoded), answered as section 2.2 says, its errors as
 * RFC 6749 section 5.2 gives them. The same exchange as the ExchangeToken RPC, without a
 * client certificate (the discovery port asks for none): an actor proves itself with an
 * actor token. The body is bounded (refused past the limit, declared or not) and, as every
 * request of the port, must arrive whole within its request deadline.
 */
import { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JwtGrpcError } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import { callerMessage, statusOf } from '../jwt-service/handlers.js';
import type { ExchangeTokenRequest, ExchangeTokenResponse } from '../jwt-service/messages.js';
import { GrpcStatus } from '../contracts/handler-api.js';
import { issuerPath } from '../discovery/documents.js';
import { TOKEN_EXCHANGE_GRANT } from './exchange.js';
import { ExchangeRefused } from './refusal.js';
import { TOKEN_REQUEST_OVERHEAD_BYTES } from './defaults.js';

/** Where the endpoint lives under the issuer, as the discovery document announces it. */
export const TOKEN_SUFFIX = '/token';

/** The parameters of an exchange request, as the RPC's fields. */
const PARAMETERS = [
  'subject_token',
  'subject_token_type',
  'actor_token',
  'actor_token_type',
  'audience',
  'resource',
  'scope',
  'requested_token_type',
] as const satisfies readonly (keyof ExchangeTokenRequest)[];

/** Parameters that authenticate a confidential client: this endpoint authenticates none, so a client that sends one is told so. */
const CLIENT_CREDENTIALS = ['client_secret', 'client_assertion', 'client_assertion_type'];

/** An answer of the endpoint: its status, the OAuth error (RFC 6749 section 5.2) and its description. */
class OAuthAnswer extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    description: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(description);
  }
}

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

function send(response: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  if (response.headersSent) return;
  const text = JSON.stringify(body);
  response.writeHead(status, { ...headers, ...NO_STORE, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/**
 * The body of `request`, refused past `maxBytes` (declared or as it arrives) or when it is
 * not UTF-8. A body over the limit is left unread, the request paused: node:http closes the
 * connection once the answer is sent, rather than reading the rest.
 */
function readBody(request: IncomingMessage, maxBytes: number): Promise<string> {
  const tooLarge = (): OAuthAnswer => new OAuthAnswer(413, 'invalid_request', `the request body is over ${maxBytes} bytes`);
  if (Number(request.headers['content-length'] ?? 0) > maxBytes) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer): void => {
      length += chunk.length;
      if (length <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      request.pause();
      request.off('data', onData);
      reject(tooLarge());
    };
    request.on('data', onData);
    request.once('error', reject);
    request.once('end', () => {
      try {
        resolve(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks, length)));
      } catch {
        reject(new OAuthAnswer(400, 'invalid_request', 'the request body is not UTF-8'));
      }
    });
  });
}

/** The exchange request of a form body: every parameter at most once (RFC 6749 section 3.2), the grant checked; others are ignored as section 3.2 says. */
function exchangeRequestOf(body: string): ExchangeTokenRequest {
  const form = new URLSearchParams(body);
  for (const name of new Set(form.keys()))
    if (form.getAll(name).length > 1)
      throw new OAuthAnswer(
        400,
        name === 'audience' || name === 'resource' ? 'invalid_target' : 'invalid_request',
        `${name}: is given more than once`,
      );
  const credential = CLIENT_CREDENTIALS.find((name) => form.has(name));
  if (credential !== undefined)
    throw new OAuthAnswer(
      401,
      'invalid_client',
      `${credential}: this endpoint authenticates no client; an actor proves itself with actor_token`,
    );
  const grant = form.get('grant_type');
  if (grant === null) throw new OAuthAnswer(400, 'invalid_request', 'grant_type: is required');
  if (grant !== TOKEN_EXCHANGE_GRANT)
    throw new OAuthAnswer(400, 'unsupported_grant_type', `grant_type: only ${TOKEN_EXCHANGE_GRANT} is served`);
  const request = {} as ExchangeTokenRequest;
  for (const name of PARAMETERS) request[name] = form.get(name) ?? '';
  return request;
}

/** The answer to a failed exchange: its OAuth error, or the server's when it failed. */
function failureAnswer(err: unknown, logger: Logger): OAuthAnswer {
  if (err instanceof OAuthAnswer) return err;
  // No OAuth error says "too many": 429 (RFC 6585 section 4) with when to come back.
  if (err instanceof ExchangeRefused && err.code === 'ERR_RATE_LIMITED')
    return new OAuthAnswer(429, 'temporarily_unavailable', err.message, { 'retry-after': '1' });
  if (err instanceof ExchangeRefused) return new OAuthAnswer(400, err.oauthError, err.message);
  if (err instanceof JwtGrpcError && err.code === 'ERR_INVALID_REQUEST') return new OAuthAnswer(400, 'invalid_request', err.message);
  const status = statusOf(err);
  if (status === GrpcStatus.UNAVAILABLE || status === GrpcStatus.RESOURCE_EXHAUSTED)
    return new OAuthAnswer(503, 'temporarily_unavailable', callerMessage(err) ?? 'try again later', { 'retry-after': '1' });
  logger.error('token endpoint: exchange failed', { error: err instanceof Error ? err.message : String(err) });
  return new OAuthAnswer(500, 'server_error', 'internal error');
}

/** What {@link tokenEndpoint} needs of the server. @internal */
export interface TokenEndpointOptions {
  /** The server's issuer: the endpoint is also served under its path, as the documents are. */
  readonly issuer: string | undefined;
  /** The server's maxTokenLength: a body holds at most two tokens and a few short parameters. */
  readonly maxTokenLength: number;
  readonly logger: Logger;
}

/**
 * The token endpoint as a route of the discovery port: answers (true) a request for
 * `/token` or `ISSUER_PATH/token`, leaves any other (false). @internal
 */
export function tokenEndpoint(
  exchange: (request: ExchangeTokenRequest) => Promise<ExchangeTokenResponse>,
  options: TokenEndpointOptions,
): (request: IncomingMessage, response: ServerResponse) => boolean {
  const path = options.issuer === undefined ? '' : issuerPath(options.issuer);
  const paths = new Set([TOKEN_SUFFIX, `${path}${TOKEN_SUFFIX}`]);
  const maxBytes = 2 * options.maxTokenLength + TOKEN_REQUEST_OVERHEAD_BYTES;
  const answer = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    try {
      if (request.method !== 'POST') throw new OAuthAnswer(405, 'invalid_request', 'method not allowed: POST', { allow: 'POST' });
      const scheme = request.headers.authorization?.trim().split(' ', 1)[0];
      if (scheme !== undefined && scheme !== '')
        throw new OAuthAnswer(401, 'invalid_client', 'this endpoint authenticates no client; an actor proves itself with actor_token', {
          'www-authenticate': `${scheme} realm="jwt-grpc"`,
        });
      const type = request.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
      if (type !== 'application/x-www-form-urlencoded')
        throw new OAuthAnswer(400, 'invalid_request', 'the body must be application/x-www-form-urlencoded (RFC 8693 section 2.1)');
      const result = await exchange(exchangeRequestOf(await readBody(request, maxBytes)));
      send(response, 200, {
        access_token: result.access_token,
        issued_token_type: result.issued_token_type,
        token_type: result.token_type,
        expires_in: result.expires_in,
        ...(result.scope !== '' && { scope: result.scope }),
      });
    } catch (err) {
      const failed = failureAnswer(err, options.logger);
      send(response, failed.status, { error: failed.error, error_description: failed.message }, failed.headers);
    }
  };
  return (request, response) => {
    const target = request.url ?? '';
    const query = target.indexOf('?');
    if (!paths.has(query === -1 ? target : target.slice(0, query))) return false;
    void answer(request, response);
    return true;
  };
}
