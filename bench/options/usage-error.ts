/** A mistake in the command line or the options: the CLI prints the message and exits with status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
