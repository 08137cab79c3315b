/**
 * The OTLP/HTTP sink of the tracing rows: answers every `POST /v1/traces` with 200 and an
 * empty body (an empty ExportTraceServiceResponse, in protobuf and in JSON alike), reading
 * and dropping what it gets. The benchmark starts it on the load generator's CPUs, so that
 * the exporter's requests cost the server under test what they would cost against a real
 * collector, and the sink's own work is not counted as the server's.
 *
 * Prints `listening on 127.0.0.1:PORT` when ready (the launcher's contract); on SIGTERM
 * prints `received N requests, B bytes` on stderr and exits.
 */
import { createServer } from 'node:http';

let requests = 0;
let bytes = 0;

const server = createServer((req, res) => {
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/v1/traces') {
      requests++;
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/x-protobuf', 'content-length': '0' }).end();
    } else {
      res.writeHead(404, { 'content-length': '0' }).end();
    }
  });
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  process.stdout.write(`listening on 127.0.0.1:${address.port}\n`);
});

process.once('SIGTERM', () => {
  process.stderr.write(`received ${requests} requests, ${bytes} bytes\n`);
  server.close();
  server.closeAllConnections();
});
