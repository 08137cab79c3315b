/** Shared by the discovery tests: HTTP requests on loopback and a staged rotation through the public API. */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { type Jwk, type KeySet, exportKeys, generateKeys, importKeys } from '../../src/lib.js';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One HTTP/1.1 request to 127.0.0.1:`port` (HTTPS trusting `ca` when given). */
export function fetchRaw(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; ca?: Buffer; body?: string } = {},
): Promise<HttpAnswer> {
  const send = options.ca === undefined ? httpRequest : httpsRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: false, ...(options.ca && { ca: options.ca, servername: 'localhost' }) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A new private ES256 key as a key file holds it, verify-only (staged) or signing. */
export async function newEs256Jwk(staged: boolean): Promise<Jwk> {
  const jwk = exportKeys(await generateKeys({ algorithms: ['ES256'] }), { includePrivate: true }).keys[0] as Jwk;
  return staged ? { ...jwk, key_ops: ['verify'] } : jwk;
}

/**
 * The phases of a staged rotation of the ES256 key of `current`: `staged` publishes the new
 * key verify-only; `activated` signs with it and keeps the old one to verify.
 */
export async function stagedRotation(current: KeySet): Promise<{ staged: KeySet; activated: KeySet; newKid: string }> {
  const old = exportKeys(current, { includePrivate: true }).keys;
  const next = await newEs256Jwk(true);
  const staged = importKeys({ keys: [next, ...old] });
  const { key_ops: _ops, ...signing } = next;
  const activated = importKeys({ keys: [signing, ...old.map((jwk) => (jwk.alg === 'ES256' ? { ...jwk, key_ops: ['verify'] } : jwk))] });
  return { staged, activated, newKid: next.kid };
}

/** A loopback port free right now, for servers that must know their URL before they start (an issuer). */
export { freePort } from '../../bench/kit/ports.js';
