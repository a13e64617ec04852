/**
 * What the docs tests read in the project's markdown: which files are its documentation, their
 * fenced code blocks, their links, and the anchors their headings get on GitHub.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');

/**
 * The documentation, as paths relative to the root: the README, CONTRIBUTING, the CHANGELOG,
 * every page under docs/, each package's README and the bench's READMEs.
 */
export function docFiles(): string[] {
  const packages = readdirSync(join(ROOT, 'packages'))
    .map((name) => join('packages', name, 'README.md'))
    .filter((file) => exists(file));
  const bench = ['bench/README.md', 'bench/results/history/README.md'].filter((file) => exists(file));
  return ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...docsPages(), ...packages, ...bench];
}

/** Every markdown page under docs/, relative to the root (`docs/rules/flow.md`). */
export function docsPages(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(ROOT, dir)).sort()) {
      const path = join(dir, name);
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) out.push(path);
    }
  };
  walk('docs');
  return out;
}

export function read(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8');
}

export function exists(file: string): boolean {
  try {
    statSync(join(ROOT, file));
    return true;
  } catch {
    return false;
  }
}

/** A fenced code block: its info string (`ts`), its first line's number (1-based) and its text. */
export interface CodeBlock {
  readonly lang: string;
  readonly line: number;
  readonly code: string;
}

/** A markdown text split into its fenced code blocks and its other lines (with their numbers). */
function scan(markdown: string): { blocks: CodeBlock[]; prose: { text: string; line: number }[] } {
  const blocks: CodeBlock[] = [];
  const prose: { text: string; line: number }[] = [];
  let open: { marker: string; lang: string; line: number; body: string[] } | undefined;
  markdown.split('\n').forEach((text, i) => {
    const fence = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(text);
    if (open === undefined) {
      if (fence) open = { marker: fence[1]!, lang: fence[2]!.trim().split(/\s/)[0]!, line: i + 2, body: [] };
      else prose.push({ text, line: i + 1 });
    } else if (
      fence &&
      fence[1]![0] === open.marker[0] &&
      fence[1]!.length >= open.marker.length &&
      !fence[2]!.trim()
    ) {
      blocks.push({ lang: open.lang, line: open.line, code: open.body.join('\n') });
      open = undefined;
    } else {
      open.body.push(text);
    }
  });
  return { blocks, prose };
}

/** The fenced code blocks of a markdown text. */
export function codeBlocks(markdown: string): CodeBlock[] {
  return scan(markdown).blocks;
}

/** A link or image in a markdown text: where it points, and the line it is on (1-based). */
export interface Link {
  readonly target: string;
  readonly line: number;
}

/**
 * The links of a markdown text outside code: inline links and images (`[text](target)`,
 * `![alt](<target>)`), reference definitions (`[label]: target`) and HTML `href` / `src`.
 */
export function links(markdown: string): Link[] {
  const out: Link[] = [];
  for (const { text, line } of scan(markdown).prose) {
    const prose = text.replace(/(`+)[^`]*?\1/g, '');
    for (const match of prose.matchAll(/\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+"[^"]*")?\s*\)/g))
      out.push({ target: match[1]!.replace(/^<|>$/g, ''), line });
    const definition = /^ {0,3}\[[^\]]+\]:\s*(\S+)/.exec(prose);
    if (definition) out.push({ target: definition[1]!.replace(/^<|>$/g, ''), line });
    for (const match of prose.matchAll(/\b(?:href|src)="([^"]*)"/g)) out.push({ target: match[1]!, line });
  }
  return out;
}

/**
 * The anchors of a markdown page as GitHub makes them: each heading's text, as rendered (inline
 * code without its backticks, a link as its text, no emphasis or HTML), lower-cased, stripped of
 * everything but letters, marks, numbers, `_`, `-` and spaces, spaces turned to `-`; a repeated
 * slug gets `-1`, `-2`, ... (github-slugger). Plus explicit `<a id>` / `<a name>` anchors.
 */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text } of scan(markdown).prose) {
    for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(match[1]!);
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(text);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

/** A heading's slug (see {@link anchors}). */
export function slug(heading: string): string {
  const rendered = heading
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .replace(/\*+|~~/g, '');
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}
