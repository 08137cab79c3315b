/**
 * The Rapid Reset guard (CVE-2023-44487) and MadeYouReset (CVE-2025-8671) over a real
 * connection to the own transport: 20,000 streams opened and at once reset, by the client
 * (RST_STREAM) or by the server on the client's cue (WINDOW_UPDATE of 0), spend the reset
 * budget (STREAM_RESET_BURST, then STREAM_RESET_RATE a second, src/transport/http2/defaults.ts)
 * and end the connection with GOAWAY ENHANCE_YOUR_CALM, while other connections are served.
 *
 * In the `load` project, alone: the budget refills at 10,000 resets a second, so the guard
 * trips only when the server reads resets faster than that. Beside other test files on a
 * 2-core machine the server can fall below it, and then, rightly, never trips (the token
 * bucket itself: test/transport/http2/wire/budget.test.ts).
 */
import { type ClientHttp2Session, connect } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallContext, GrpcStatus } from '../../src/contracts/handler-api.js';
import { PROBE } from './helpers/probe.js';
import {
  FRAME_FLAG,
  FRAME_TYPE,
  FrameConnection,
  type ServerFrame,
  frame,
  grpcHeaders,
  h2Frame,
  rawRequest,
  requestBlock,
} from './helpers/raw.js';
import { UNARY, errorCode, isGoaway, u32 } from './helpers/frame-exchange.js';
import { closeAllServers, startHttp2 } from './helpers/servers.js';

const STREAMS = 20_000;
const ENHANCE_YOUR_CALM = 11;

let port: number;
beforeAll(async () => {
  ({ port } = await startHttp2([[{ Unary: PROBE.Unary }, { Unary: async (request: unknown, _call: CallContext) => request }]] as never));
});
afterAll(closeAllServers);

/** {@link STREAMS} streams opened on a bare connection, each followed at once by what `after` makes of its id; the GOAWAY that ends it. */
async function openAndReset(after: (streamId: number) => Buffer): Promise<ServerFrame> {
  const conn = await FrameConnection.open(port);
  try {
    const block = requestBlock(UNARY);
    const frames: Buffer[] = [];
    for (let i = 0; i < STREAMS; i++) frames.push(h2Frame(FRAME_TYPE.HEADERS, FRAME_FLAG.END_HEADERS, 2 * i + 1, block), after(2 * i + 1));
    conn.send(...frames);
    const goaway = await conn.waitFor(isGoaway, 10_000);
    await conn.closed;
    return goaway;
  } finally {
    conn.close();
  }
}

/** One unary call on a fresh node:http2 connection: what another client of the server gets. */
async function anotherClientsCall(): Promise<number | undefined> {
  const client = await new Promise<ClientHttp2Session>((resolve, reject) => {
    const connecting = connect(`http://127.0.0.1:${port}`);
    connecting.once('remoteSettings', () => resolve(connecting));
    connecting.once('error', reject);
  });
  try {
    return (await rawRequest(client, { headers: grpcHeaders(UNARY), chunks: [frame(Buffer.from('{"ok":1}'))] })).status;
  } finally {
    client.close();
  }
}

describe('the stream reset budget, over a real connection', () => {
  it('Rapid Reset: past the burst of RST_STREAM frames, GOAWAY ENHANCE_YOUR_CALM; other connections are served', async () => {
    expect(errorCode(await openAndReset((id) => h2Frame(FRAME_TYPE.RST_STREAM, 0, id, u32(8))))).toBe(ENHANCE_YOUR_CALM);
    expect(await anotherClientsCall()).toBe(GrpcStatus.OK);
  });

  it('MadeYouReset: streams the client makes the server reset (WINDOW_UPDATE of 0) count against the same burst', async () => {
    expect(errorCode(await openAndReset((id) => h2Frame(FRAME_TYPE.WINDOW_UPDATE, 0, id, u32(0))))).toBe(ENHANCE_YOUR_CALM);
    expect(await anotherClientsCall()).toBe(GrpcStatus.OK);
  });
});
