/**
 * The audit log at a bounded rate: GenerateJwt under a policy writes one line per call, and
 * a caller that floods the issuer (15,000 calls a second, each refused or not) would write
 * hundreds of megabytes a minute, filling the disk and drowning the lines that matter. So
 * per (caller, decision, rule) the first line of each second is written whole, the others
 * of that second are only counted, and once the second is over one line says how many
 * were left out. The metric jwt_grpc_policy_decisions_total still counts every call.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from '../base/log.js';

/** Each (caller, decision, rule) writes at most one whole line in this long, then one count of those it left out. */
export const AUDIT_SUMMARY_WINDOW_MS = 1_000;
/**
 * The most (caller, decision, rule) groups followed at once: the callers come from the
 * policy, but a refusal names whatever caller id a certificate of the client CA carries.
 * Past this many, new groups share one, caller `*`, so the log stays bounded whatever connects.
 */
export const MAX_AUDIT_GROUPS = 10_000;

/** One group's window: when its whole line was written, and how many lines it left out since. */
interface Window {
  readonly startMs: number;
  readonly level: 'info' | 'warn';
  readonly fields: Readonly<Record<string, unknown>>;
  suppressed: number;
}

/**
 * Writes audit lines through `logger`, at most one whole line a second per (caller,
 * decision, rule), then `policy: audit lines suppressed` with the count left out. @internal
 *
 * @example
 * ```ts
 * // hidden: import { silentLogger } from '../base/log.js';
 * const audit = new AuditSummary(silentLogger);
 * audit.write('info', 'policy: token issued', { audit: 'issue', caller: 'dns:a', decision: 'allow', rule: 'none' });
 * ```
 */
export class AuditSummary {
  readonly #logger: Logger;
  readonly #windows = new Map<string, Window>();
  #timer: NodeJS.Timeout | undefined;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Writes the line, or counts it when its group already wrote one within the window. */
  write(level: 'info' | 'warn', message: string, fields: Readonly<Record<string, unknown>>): void {
    const nowMs = performance.now();
    let key = groupKey(fields['caller'], fields['decision'], fields['rule']);
    let window = this.#windows.get(key);
    if (window === undefined && this.#windows.size >= MAX_AUDIT_GROUPS) {
      key = groupKey('*', fields['decision'], fields['rule']);
      window = this.#windows.get(key);
    }
    if (window !== undefined && nowMs - window.startMs < AUDIT_SUMMARY_WINDOW_MS) {
      window.suppressed++;
      this.#schedule();
      return;
    }
    if (window !== undefined) this.#summarise(window);
    const { audit, caller, decision, rule } = fields;
    this.#windows.set(key, {
      startMs: nowMs,
      level,
      fields: { audit, caller: key.startsWith('*\0') ? '*' : caller, decision, rule },
      suppressed: 0,
    });
    this.#schedule();
    this.#logger[level](message, fields);
  }

  /** One line for a window's count, if it left any out. */
  #summarise(window: Window): void {
    if (window.suppressed === 0) return;
    this.#logger[window.level]('policy: audit lines suppressed', {
      ...window.fields,
      suppressed: window.suppressed,
      windowMs: AUDIT_SUMMARY_WINDOW_MS,
    });
    window.suppressed = 0;
  }

  /** Ends the windows that are over: each writes its count and is forgotten. */
  #sweep(): void {
    this.#timer = undefined;
    const nowMs = performance.now();
    for (const [key, window] of this.#windows) {
      if (nowMs - window.startMs < AUDIT_SUMMARY_WINDOW_MS) continue;
      this.#summarise(window);
      this.#windows.delete(key);
    }
    this.#schedule();
  }

  /** A sweep a window after now while any group is followed; none otherwise. Never keeps the process alive. */
  #schedule(): void {
    if (this.#timer !== undefined || this.#windows.size === 0) return;
    this.#timer = setTimeout(() => this.#sweep(), AUDIT_SUMMARY_WINDOW_MS);
    this.#timer.unref();
  }
}

function groupKey(caller: unknown, decision: unknown, rule: unknown): string {
  return `${String(caller)}\0${String(decision)}\0${String(rule)}`;
}
