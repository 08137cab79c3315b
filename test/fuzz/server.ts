/**
 * The server under fuzz, as a child process: createJwtServer from the public API on the
 * default transport (the own HTTP/2), on 127.0.0.1:0. Sends its port over IPC and answers
 * 'memory' with process.memoryUsage(). An uncaught exception ends this process, which
 * the runner sees as a crash (nothing here catches it).
 */
import { createJwtServer, generateKeys, silentLogger } from '../../src/lib.js';

const keys = await generateKeys({ algorithms: ['HS256'] });
const server = createJwtServer({ keys, logger: silentLogger });
const port = await server.listen('127.0.0.1:0');
process.send?.({ port });
process.on('message', (message) => {
  if (message === 'memory') process.send?.({ memory: process.memoryUsage() });
  if (message === 'close') void server.close({ graceMs: 500 }).then(() => process.exit(0));
});
