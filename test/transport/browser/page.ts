/**
 * The page of test/transport/browser.integration.test.ts, bundled with esbuild for the
 * browser: connect-web's Connect and gRPC-Web transports (fetch, as a web app calls) for
 * JwtService, its descriptor fetched from the page's own origin (no generated code). The test
 * calls `globalThis.callJwt` in the page and reads what it resolves to.
 */
import { createFileRegistry, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcWebTransport } from '@connectrpc/connect-web';

/** What the page saw: GenerateJwt's and VerifyJwt's answers, or the error that ended the calls. */
export type PageResult =
  | { readonly jwt: string; readonly sub: string; readonly valid: boolean; readonly verifiedSub: string; readonly claims: string }
  | { readonly error: string; readonly code: number | undefined };

/** GenerateJwt, then VerifyJwt of its token, through `protocol` to the server at `baseUrl`. */
async function callJwt(baseUrl: string, protocol: 'connect' | 'grpc-web'): Promise<PageResult> {
  const set = new Uint8Array(await (await fetch('/descriptor-set.binpb')).arrayBuffer());
  const service = createFileRegistry(fromBinary(FileDescriptorSetSchema, set)).getService('jwt.services.JwtService');
  if (service === undefined) return { error: 'the descriptor set has no JwtService', code: undefined };
  const transport = protocol === 'connect' ? createConnectTransport({ baseUrl }) : createGrpcWebTransport({ baseUrl });
  // biome-ignore lint/suspicious/noExplicitAny: messages of a runtime-built service have no static type
  const client = createClient(service, transport) as any;
  try {
    const issued = await client.generateJwt({ algorithm: 'ES256', subject: 'ada', claimsJson: '{"via":"browser"}' });
    const verified = await client.verifyJwt({ jwt: issued.jwt });
    return { jwt: issued.jwt, sub: issued.sub, valid: verified.valid, verifiedSub: verified.sub, claims: verified.claimsJson };
  } catch (err) {
    return { error: String(err), code: err instanceof ConnectError ? err.code : undefined };
  }
}

(globalThis as { callJwt?: typeof callJwt }).callJwt = callJwt;
