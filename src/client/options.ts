import { invalidOption } from '../base/errors.js';

/**
 * An integer option within bounds, or its default when not given (`undefined` only: a `null`
 * is refused, not read as "not given"); throws `ERR_INVALID_OPTION` naming it.
 */
export function integerOption(name: string, value: unknown, fallback: number, min: number, max: number): number {
  const resolved = value === undefined ? fallback : value;
  if (typeof resolved !== 'number' || !Number.isInteger(resolved) || resolved < min || resolved > max) {
    throw invalidOption(name, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return resolved;
}

/** An optional non-empty string option. */
export function stringOption(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0)
    throw invalidOption(name, `must be a non-empty string, got ${JSON.stringify(value)}`);
  return value;
}
