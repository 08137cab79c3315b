/**
 * The logging seam: jwt-grpc never writes to the console directly, so an embedding
 * service can route its lines into its own logger. Fields never hold key material.
 */
export interface Logger {
  info(message: string, fields?: Readonly<Record<string, unknown>>): void;
  warn(message: string, fields?: Readonly<Record<string, unknown>>): void;
  error(message: string, fields?: Readonly<Record<string, unknown>>): void;
}

function line(level: string, message: string, fields?: Readonly<Record<string, unknown>>): string {
  const tail = fields === undefined ? '' : ' ' + JSON.stringify(fields);
  return `jwt-grpc ${level}: ${message}${tail}\n`;
}

/**
 * A logger that writes one line per event to stderr. `level: 'warn'` (the library's
 * default) keeps info lines out; the CLI uses `'info'`.
 *
 * @example
 * ```ts
 * const server = createJwtServer({ logger: createStderrLogger('info') });
 * ```
 */
export function createStderrLogger(level: 'info' | 'warn' = 'warn'): Logger {
  const write = (text: string): void => {
    process.stderr.write(text);
  };
  return {
    info: level === 'info' ? (message, fields) => write(line('info', message, fields)) : () => {},
    warn: (message, fields) => write(line('warn', message, fields)),
    error: (message, fields) => write(line('error', message, fields)),
  };
}

/** A logger that drops everything: `logger: silentLogger`. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
