/** A table: a header row and rows of cells, rendered as GitHub markdown (readable on a terminal too). */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  align?: readonly ('l' | 'r')[],
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const pad = (cell: string, i: number): string =>
    (align?.[i] ?? (i === 0 ? 'l' : 'r')) === 'l' ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!);
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => pad(c, i)).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => ((align?.[i] ?? (i === 0 ? 'l' : 'r')) === 'l' ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map((row) => line(header.map((_, i) => row[i] ?? '')))].join('\n');
}
