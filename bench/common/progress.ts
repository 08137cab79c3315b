import { formatClock } from './format.js';

/** What the progress line says about the step that is starting. */
export interface ProgressStep {
  readonly server: string;
  readonly scenario: string;
  readonly round: number;
  readonly rounds: number;
}

/**
 * The `[i/n] server scenario round r/R  elapsed mm:ss  ~mm:ss left` line on stderr.
 *
 * The estimate is the planned seconds still to run, scaled by how much longer than
 * planned the steps done so far actually took (server starts, warm-ups, probes and
 * ghz's own start-up are not in the plan): simple, and it converges as the run goes on.
 */
export class Progress {
  readonly #total: number;
  readonly #plannedSecondsPerStep: number;
  readonly #write: (line: string) => void;
  readonly #startedAt = Date.now();
  #done = 0;

  constructor(totalSteps: number, plannedSecondsPerStep: number, write: (line: string) => void = (l) => process.stderr.write(l + '\n')) {
    this.#total = totalSteps;
    this.#plannedSecondsPerStep = plannedSecondsPerStep;
    this.#write = write;
  }

  /** Announces the next step. */
  start(step: ProgressStep): void {
    const elapsed = (Date.now() - this.#startedAt) / 1000;
    this.#write(
      `[${this.#done + 1}/${this.#total}] ${step.server} ${step.scenario} round ${step.round}/${step.rounds}` +
        `  elapsed ${formatClock(elapsed)}  ~${formatClock(this.secondsLeft(elapsed))} left`,
    );
  }

  /** Marks the step announced last as finished. */
  finish(): void {
    this.#done += 1;
  }

  /** Counts steps that will not run (a cell that failed early) as done. */
  skip(steps: number): void {
    this.#done += steps;
  }

  /** Estimated seconds left, given the seconds elapsed so far. */
  secondsLeft(elapsedSeconds: number): number {
    const remaining = this.#total - this.#done;
    const planned = remaining * this.#plannedSecondsPerStep;
    if (this.#done === 0 || this.#plannedSecondsPerStep <= 0) return planned;
    const slowdown = elapsedSeconds / (this.#done * this.#plannedSecondsPerStep);
    return planned * Math.max(1, slowdown);
  }
}
