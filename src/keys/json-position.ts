/**
 * Where a JSON text stops being JSON, as "line L column C", for error messages about key
 * and subjects files. V8's own messages give a position only for some errors, and some of
 * them quote the text (a key file holds secrets), so the position is found here instead.
 */

/** A prefix is viable when it parses or when what V8 misses is at its very end. */
function viable(prefix: string): boolean {
  try {
    JSON.parse(prefix);
    return true;
  } catch (err) {
    const message = (err as Error).message;
    if (message.includes('Unexpected end of JSON input')) return true;
    const position = /at position (\d+)/.exec(message)?.[1];
    return position !== undefined && Number(position) >= prefix.length;
  }
}

/**
 * Describes where `text` (which `JSON.parse` refused) goes wrong: "line 2 column 5", or
 * "it ends early, at line 9 column 1" for a truncated file. Never quotes the text. @internal
 */
export function jsonErrorPosition(text: string): string {
  if (viable(text)) return `it ends early, at ${lineColumn(text, text.length)}`;
  // The longest viable prefix, by bisection: the character after it is the first wrong one.
  let good = 0;
  let bad = text.length;
  while (bad - good > 1) {
    const mid = (good + bad) >>> 1;
    if (viable(text.slice(0, mid))) good = mid;
    else bad = mid;
  }
  return lineColumn(text, good);
}

function lineColumn(text: string, index: number): string {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) {
    line += 1;
    start = i + 1;
  }
  return `line ${line} column ${index - start + 1}`;
}
