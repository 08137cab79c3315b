import { pinoModule } from './optional-deps.js';
import { optionNames, refuseUnknownOptions } from './known-options.js';

/**
 * The logging seam: jwt-grpc never writes to the console directly, so an embedding
 * service can route its lines into its own logger. Fields never hold key material.
 *
 * @example
 * ```ts
 * const logger: Logger = {
 *   info: (message, fields) => console.log(message, fields ?? {}),
 *   warn: (message, fields) => console.warn(message, fields ?? {}),
 *   error: (message, fields) => console.error(message, fields ?? {}),
 * };
 * const server = createJwtServer({ logger });
 * ```
 */
export interface Logger {
  info(message: string, fields?: Readonly<Record<string, unknown>>): void;
  warn(message: string, fields?: Readonly<Record<string, unknown>>): void;
  error(message: string, fields?: Readonly<Record<string, unknown>>): void;
}

/**
 * The lowest level a {@link createStderrLogger} writes: `info` writes everything,
 * `error` only errors.
 *
 * @example
 * ```ts
 * const level: LogLevel = process.env.DEBUG === undefined ? 'warn' : 'info';
 * ```
 */
export type LogLevel = 'info' | 'warn' | 'error';

/**
 * How a {@link createStderrLogger} writes a line: `text` for people
 * (`jwt-grpc warn: message {"field":1}`), `json` for log pipelines (one JSON object per
 * line with `time`, `level`, `pid`, `worker` in a cluster, `message` and the fields).
 *
 * @example
 * ```ts
 * const format: LogFormat = process.stderr.isTTY ? 'text' : 'json';
 * ```
 */
export type LogFormat = 'text' | 'json';

/**
 * Options of {@link createStderrLogger}.
 *
 * @example
 * ```ts
 * const options: StderrLoggerOptions = { level: 'info', format: 'json', bindings: { worker: 1 } };
 * ```
 */
export interface StderrLoggerOptions {
  /** Default `warn`: warnings and errors. */
  readonly level?: LogLevel;
  /** Default `text`. */
  readonly format?: LogFormat;
  /** Members added to every JSON line (the CLI adds `worker`); text lines leave them out. */
  readonly bindings?: Readonly<Record<string, unknown>>;
}

/** The names {@link StderrLoggerOptions} holds; an object with another is refused. */
const STDERR_LOGGER_OPTION_NAMES = optionNames<StderrLoggerOptions>({ level: true, format: true, bindings: true });

const RANK: Readonly<Record<LogLevel, number>> = { info: 0, warn: 1, error: 2 };

/**
 * Info lines for stderr, written together once per turn of the event loop. A server under
 * a policy logs an audit line per call, and on Linux a write to a pipe or file is a
 * synchronous write(2): one per line cost more than signing the token (7 µs of a 12 µs
 * HS256 call, `npm run profile -- --server jwt-grpc-mtls-policy`). The info lines of a turn
 * go out in one write at the start of the next; a warning or an error goes out at once,
 * after what is pending, so the order holds. At exit (process.exit, an uncaught
 * exception, the end of the event loop) what is left is written before the process ends:
 * only a process killed outright (SIGKILL) can lose lines, the info lines of its last turn.
 */
const stderrLines = {
  pending: [] as string[],
  scheduled: false,
  exitHooked: false,
  write(line: string): void {
    this.pending.push(line);
    if (this.scheduled) return;
    this.scheduled = true;
    // Registered on the first line, not at import: importing the package starts nothing.
    if (!this.exitHooked) {
      this.exitHooked = true;
      process.once('exit', () => this.flush());
    }
    setImmediate(() => this.flush()).unref();
  },
  /** Writes `line` now, after whatever is pending. */
  writeNow(line: string): void {
    if (this.pending.length > 0) {
      this.pending.push(line);
      this.flush();
    } else process.stderr.write(line);
  },
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const text = this.pending.length === 1 ? (this.pending[0] as string) : this.pending.join('');
    this.pending.length = 0;
    process.stderr.write(text);
  },
};

function textLine(level: string, message: string, fields?: Readonly<Record<string, unknown>>): string {
  const tail = fields === undefined ? '' : ' ' + JSON.stringify(fields);
  return `jwt-grpc ${level}: ${message}${tail}\n`;
}

function textLogger(level: LogLevel): Logger {
  const at = (lineLevel: LogLevel): ((message: string, fields?: Readonly<Record<string, unknown>>) => void) =>
    RANK[lineLevel] < RANK[level]
      ? () => {}
      : lineLevel === 'info'
        ? (message, fields) => stderrLines.write(textLine(lineLevel, message, fields))
        : (message, fields) => stderrLines.writeNow(textLine(lineLevel, message, fields));
  return { info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * JSON through pino: its serializer is what Node log pipelines expect (and are tuned to).
 * Its lines go out as the text logger's do: info once per turn of the event loop, the rest at once.
 */
function jsonLogger(level: LogLevel, bindings: Readonly<Record<string, unknown>>): Logger {
  const { pino } = pinoModule();
  const log = pino(
    {
      level,
      messageKey: 'message',
      base: { pid: process.pid, ...bindings },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    // The level formatter below makes `level` each line's first member.
    { write: (line: string) => (line.startsWith('{"level":"info"') ? stderrLines.write(line) : stderrLines.writeNow(line)) },
  );
  return {
    info: (message, fields) => (fields === undefined ? log.info(message) : log.info(fields, message)),
    warn: (message, fields) => (fields === undefined ? log.warn(message) : log.warn(fields, message)),
    error: (message, fields) => (fields === undefined ? log.error(message) : log.error(fields, message)),
  };
}

/**
 * A logger that writes one line per event to stderr, as text or JSON. The library's
 * default is `{ level: 'warn' }`; the CLI takes level and format from `--log-level` and
 * `--log-format`.
 *
 * @example
 * ```ts
 * const server = createJwtServer({ logger: createStderrLogger({ level: 'info', format: 'json' }) });
 * ```
 */
export function createStderrLogger(options: StderrLoggerOptions = {}): Logger {
  refuseUnknownOptions(options, STDERR_LOGGER_OPTION_NAMES, { owner: 'createStderrLogger' });
  const { level = 'warn', format = 'text', bindings = {} } = options;
  return format === 'json' ? jsonLogger(level, bindings) : textLogger(level);
}

/**
 * A logger that drops everything.
 *
 * @example
 * ```ts
 * // hidden: declare const keys: KeySet;
 * const server = createJwtServer({ keys, logger: silentLogger });
 * ```
 */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
