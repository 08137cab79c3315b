// A TypeDoc plugin: drops the `// hidden:` set-up lines of TSDoc examples from the
// reference, as rustdoc hides a doctest's `#` lines. The tests compile them
// (test/package/examples.ts); a reader does not need them.
import { Converter } from 'typedoc';

const HIDDEN_LINE = /^[ \t]*\/\/ hidden:.*\n/gm;

function strip(comment) {
  if (comment === undefined) return;
  for (const parts of [comment.summary, ...comment.blockTags.map((tag) => tag.content)]) {
    for (const part of parts) {
      if (part.kind === 'code') part.text = part.text.replace(HIDDEN_LINE, '');
    }
  }
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_END, (context) => {
    for (const reflection of Object.values(context.project.reflections)) strip(reflection.comment);
  });
}
