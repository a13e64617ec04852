/**
 * A table: a header row and rows of cells, rendered as GitHub markdown. Cells are not padded to
 * their column's width: the committed report is read rendered, and padding made a third of its size.
 */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  align?: readonly ('l' | 'r')[],
): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  const rule = `|${header.map((_, i) => ((align?.[i] ?? (i === 0 ? 'l' : 'r')) === 'l' ? ':--' : '--:')).join('|')}|`;
  return [line(header), rule, ...rows.map((row) => line(header.map((_, i) => row[i] ?? '')))].join('\n');
}
