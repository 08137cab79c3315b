/**
 * Runs `work` at most once at a time: callers that arrive while it runs share its
 * promise, so a thousand waiting calls cost one fetch.
 */
export function singleFlight<T>(work: () => Promise<T>): { run(): Promise<T>; readonly running: boolean } {
  let inFlight: Promise<T> | undefined;
  return {
    run() {
      inFlight ??= work().finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    },
    get running() {
      return inFlight !== undefined;
    },
  };
}
