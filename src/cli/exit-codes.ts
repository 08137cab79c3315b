/**
 * The exit codes of the `jwt-grpc` command, one place: main.ts exits with them, `--help`
 * prints them, and docs/cli.md's table is checked against them (test/docs/contract.test.ts).
 */

/** Each exit code, what it means for `serve`, and for the other commands (token, verify, revoke, keys). */
export const EXIT_CODES = [
  {
    code: 0,
    serve: 'after a clean shutdown (SIGTERM or SIGINT drained it)',
    commands: 'done: a token printed, a valid token (verify), a token revoked, a key file written',
  },
  {
    code: 1,
    serve: 'cannot start, or its workers crash in a loop',
    commands: 'refused or failed: the call failed, the token is not valid (verify), a keys command refused',
  },
  { code: 2, serve: 'a bad option: unknown, missing or out of range (the message names it)', commands: 'the same: a bad option' },
] as const;

/**
 * The codes by name, for the code that exits with them.
 *
 * @example
 * ```ts
 * process.exit(err.code === 'ERR_INVALID_OPTION' ? EXIT.badOption : EXIT.failed);
 * ```
 */
export const EXIT = { ok: 0, failed: 1, badOption: 2 } as const satisfies Record<string, (typeof EXIT_CODES)[number]['code']>;
