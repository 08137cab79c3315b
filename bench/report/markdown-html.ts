/**
 * The small part of Markdown that summary.md uses, as HTML: headings, paragraphs, `- `
 * lists, pipe tables (with their alignment row), **bold**, `code` and [links](url). Not a
 * general Markdown renderer: enough that report.html needs no script and no network.
 */

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** Inline markup of one escaped line: code first, so that `**` inside code stays literal. */
function inline(text: string): string {
  const codes: string[] = [];
  let html = escapeHtml(text).replace(/`([^`]+)`/g, (_m, code: string) => `\u0000${codes.push(code) - 1}\u0000`);
  html = html.replace(/\*\*(.+?)\*\*/g, '<strong>$1</strong>');
  // Only http(s) links and relative ones (no colon): a javascript: URL would otherwise become live.
  html = html.replace(/\[([^\]]+)\]\((https?:\/\/[^)\s]+|[^):\s]+)\)/g, '<a href="$2">$1</a>');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL brackets the placeholders this file wrote for code spans.
  return html.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => `<code>${codes[Number(i)]}</code>`);
}

function cellsOf(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((c) => c.trim());
}

function table(lines: readonly string[]): string {
  const [head, alignment, ...body] = lines;
  const aligns = cellsOf(alignment ?? '').map((a) =>
    a.endsWith(':') && !a.startsWith(':') ? 'right' : a.startsWith(':') && a.endsWith(':') ? 'center' : 'left',
  );
  const row = (line: string, tag: 'th' | 'td'): string =>
    `<tr>${cellsOf(line)
      .map((c, i) => `<${tag} style="text-align:${aligns[i] ?? 'left'}">${inline(c)}</${tag}>`)
      .join('')}</tr>`;
  return `<table>\n<thead>${row(head ?? '', 'th')}</thead>\n<tbody>\n${body.map((l) => row(l, 'td')).join('\n')}\n</tbody>\n</table>`;
}

/** The HTML of a Markdown document in summary.md's subset. */
export function markdownToHtml(markdown: string): string {
  const out: string[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; ) {
    const line = lines[i] ?? '';
    if (line.trim() === '') {
      i++;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading !== null) {
      const level = heading[1]?.length ?? 1;
      out.push(`<h${level}>${inline(heading[2] ?? '')}</h${level}>`);
      i++;
      continue;
    }
    const block: string[] = [];
    const kind = line.startsWith('|') ? 'table' : /^\s*- /.test(line) ? 'list' : 'paragraph';
    while (i < lines.length && (lines[i] ?? '').trim() !== '' && !/^#{1,6}\s/.test(lines[i] ?? '')) {
      const next = lines[i] ?? '';
      const nextKind = next.startsWith('|') ? 'table' : /^\s*- /.test(next) ? 'list' : 'paragraph';
      if (nextKind !== kind && !(kind === 'list' && nextKind === 'paragraph')) break;
      block.push(next);
      i++;
    }
    if (kind === 'table') out.push(table(block));
    else if (kind === 'list')
      out.push(
        `<ul>\n${listItems(block)
          .map((item) => `<li>${inline(item)}</li>`)
          .join('\n')}\n</ul>`,
      );
    else out.push(`<p>${inline(block.join(' '))}</p>`);
  }
  return out.join('\n');
}

/** `- ` items; a line without the dash continues the item before it. */
function listItems(block: readonly string[]): string[] {
  const items: string[] = [];
  for (const line of block) {
    if (/^\s*- /.test(line)) items.push(line.replace(/^\s*- /, ''));
    else items[items.length - 1] += ' ' + line.trim();
  }
  return items;
}
