import { readFileSync, writeFileSync } from 'node:fs';
import { renderSummary, SUMMARY_END, SUMMARY_START } from './render-summary';
import type { BenchRun } from './render-report';

/**
 * Puts the run's summary into a markdown file that quotes it (the README's Performance section),
 * replacing what lies between {@link SUMMARY_START} and {@link SUMMARY_END}.
 *
 * @throws Error when the file lacks the two marker lines, naming the file.
 */
export function quoteSummary(path: string, run: BenchRun): void {
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(SUMMARY_START);
  const end = text.indexOf(SUMMARY_END);
  if (start < 0 || end < start)
    throw new Error(`${path} has no bench summary to replace: it needs the lines ${SUMMARY_START} and ${SUMMARY_END}`);
  writeFileSync(path, text.slice(0, start) + renderSummary(run) + text.slice(end + SUMMARY_END.length));
}
