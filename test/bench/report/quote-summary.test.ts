import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quoteSummary } from '../../../bench/report/quote-summary';
import { renderMarkdown, type BenchRun } from '../../../bench/report/render-report';
import { SUMMARY_END, SUMMARY_START } from '../../../bench/report/render-summary';

const ROOT = join(__dirname, '..', '..', '..');
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

function savedRun(): BenchRun {
  const saved = JSON.parse(read('bench/results/latest.json')) as BenchRun & { startedAt: string };
  return { ...saved, startedAt: new Date(saved.startedAt) };
}

function summaryOf(text: string): string {
  const start = text.indexOf(SUMMARY_START);
  const end = text.indexOf(SUMMARY_END);
  expect(start).toBeGreaterThanOrEqual(0);
  expect(end).toBeGreaterThan(start);
  return text.slice(start, end);
}

describe('the bench results', () => {
  it('are, in bench/results/latest.md, what the report renderer makes of latest.json', () => {
    expect(read('bench/results/latest.md')).toBe(renderMarkdown(savedRun()));
  });

  it("are quoted in the README's Performance section as latest.md's summary", () => {
    expect(summaryOf(read('README.md'))).toBe(summaryOf(read('bench/results/latest.md')));
  });

  it('say nothing of runs other than the one measured', () => {
    const report = read('bench/results/latest.md');
    expect(report).not.toMatch(/^## (After|Before|Kept from|Core again|HTTP again)/m);
    expect(report.match(/^# /gm)).toHaveLength(1);
  });
});

describe('quoteSummary', () => {
  const dir = mkdtempSync(join(tmpdir(), 'floodgate-quote-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('replaces what lies between the markers, and only that', () => {
    const file = join(dir, 'README.md');
    writeFileSync(file, `# Title\n\nbefore\n\n${SUMMARY_START}\nold figures\n${SUMMARY_END}\n\nafter\n`);
    quoteSummary(file, savedRun());
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith('# Title\n\nbefore\n\n')).toBe(true);
    expect(text.endsWith(`${SUMMARY_END}\n\nafter\n`)).toBe(true);
    expect(text).not.toContain('old figures');
    expect(text).toContain('| measure');
  });

  it('fails, naming the file, when the markers are missing', () => {
    const file = join(dir, 'plain.md');
    writeFileSync(file, '# No summary here\n');
    expect(() => quoteSummary(file, savedRun())).toThrow(`${file} has no bench summary to replace`);
  });
});
