/**
 * The server under fuzz, as a child process: createJwtServer from the public API on the
 * default transport (the own HTTP/2), on 127.0.0.1:0. Sends its port over IPC and answers
 * 'memory' with process.memoryUsage() and the warnings and errors logged so far. An uncaught exception ends this process, which
 * the runner sees as a crash (nothing here catches it).
 */
import { type Logger, createJwtServer, generateKeys } from '../../src/lib/index.js';

/** Warnings and errors the server logged, by level and message: an exception the transport caught shows here. */
const logged = new Map<string, number>();
const count =
  (level: string) =>
  (message: string): void => {
    const key = `${level}:${message.slice(0, 80)}`;
    logged.set(key, (logged.get(key) ?? 0) + 1);
  };
const logger: Logger = { info() {}, warn: count('warn'), error: count('error') };

const keys = await generateKeys({ algorithms: ['HS256'] });
const server = createJwtServer({ keys, logger });
const port = await server.listen('127.0.0.1:0');
process.send?.({ port });
process.on('message', (message) => {
  if (message === 'memory') process.send?.({ memory: process.memoryUsage(), logged: Object.fromEntries(logged) });
  if (message === 'close') void server.close({ graceMs: 500 }).then(() => process.exit(0));
});
// The runner gone (finished, killed, crashed): nothing else would end this process.
process.on('disconnect', () => process.exit(0));
