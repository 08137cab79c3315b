/**
 * Renders a GitHub-flavoured markdown table: the first `textColumns` columns
 * left-aligned (names), the others right-aligned (figures).
 */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[], textColumns = 1): string {
  const align = header.map((_, i) => (i < textColumns ? ':---' : '---:'));
  const line = (cells: readonly string[]): string => `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(header), line(align), ...rows.map(line)].join('\n');
}
