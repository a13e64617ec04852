import { dirname, join, normalize } from 'node:path';
import { anchors, docFiles, docsPages, exists, links, read, slug } from './markdown';

/**
 * Every link of the documentation leads somewhere: a relative link names a file or folder of the
 * repository, and a `#anchor` one of the target page's headings as GitHub slugs them. Links to
 * the project's own repository on GitHub (built from the root package.json's `repository`, when
 * it has one) are checked as the files they name; other absolute URLs are not fetched.
 */
const REPOSITORY = repositoryUrl();

function repositoryUrl(): string | undefined {
  const manifest = JSON.parse(read('package.json')) as { repository?: string | { url?: string } };
  const url = typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url;
  return url
    ?.replace(/^git\+/, '')
    .replace(/^github:/, 'https://github.com/')
    .replace(/\.git$/, '')
    .replace(/\/$/, '');
}

/** The file a link names, relative to the root (`undefined` for a URL elsewhere), and its anchor. */
function resolveLink(from: string, target: string): { file: string | undefined; anchor: string | undefined } {
  const hash = target.indexOf('#');
  const path = decodeURI(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  if (REPOSITORY !== undefined && path.startsWith(`${REPOSITORY}/`)) {
    const inRepo = /^\/(?:blob|tree)\/[^/]+\/(.*)$/.exec(path.slice(REPOSITORY.length));
    return { file: inRepo ? normalize(inRepo[1]!) : undefined, anchor };
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(path)) return { file: undefined, anchor: undefined };
  if (path === '') return { file: from, anchor };
  if (path.startsWith('/')) return { file: normalize(path.slice(1)), anchor };
  return { file: normalize(join(dirname(from), path)), anchor };
}

/** What is wrong with a link, or `undefined`. */
function problem(from: string, target: string): string | undefined {
  const { file, anchor } = resolveLink(from, target);
  if (file === undefined) return undefined;
  if (file.startsWith('..')) return `${target} leaves the repository`;
  if (!exists(file)) return `${target}: no file ${file}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!file.endsWith('.md')) return /^L\d+(-L\d+)?$/.test(anchor) ? undefined : `${target}: ${file} has no anchors`;
  return anchors(read(file)).has(anchor) ? undefined : `${target}: ${file} has no heading #${anchor}`;
}

describe('the documentation links', () => {
  it('lead to a file of the repository, and to a heading of it for every #anchor', () => {
    const files = docFiles();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'packages/core/README.md']));
    const problems = files.flatMap((file) =>
      links(read(file)).flatMap(({ target, line }) => {
        const wrong = problem(file, target);
        return wrong === undefined ? [] : [`${file}:${line}: ${wrong}`];
      }),
    );
    expect(problems).toEqual([]);
  });

  it('reach every page under docs/ from the index, docs/README.md', () => {
    const linked = new Set(
      links(read('docs/README.md')).map(({ target }) => resolveLink('docs/README.md', target).file),
    );
    expect(docsPages().filter((page) => page !== 'docs/README.md' && !linked.has(page))).toEqual([]);
  });

  it("link each package's README to its pages under docs/, as CONTRIBUTING.md says", () => {
    const packages = docFiles().filter((file) => file.startsWith('packages/'));
    for (const file of packages) {
      const pages = links(read(file))
        .map(({ target }) => target)
        .filter((target) => resolveLink(file, target).file?.startsWith('docs/'));
      expect({ file, pages: pages.length > 0 }).toEqual({ file, pages: true });
      // With a repository URL, npm's site shows the README away from the repository: links are absolute.
      if (REPOSITORY !== undefined) expect(pages.filter((target) => !target.startsWith(REPOSITORY))).toEqual([]);
    }
  });
});

describe('reading markdown as GitHub does', () => {
  it('slugs a heading: lower case, no punctuation or code marks, underscores kept, words joined by hyphens', () => {
    expect(slug('ERR_FLOW_BLOCKED')).toBe('err_flow_blocked');
    expect(slug('Cluster mode (Redis)')).toBe('cluster-mode-redis');
    expect(slug('`fg.run()` and **timeouts**')).toBe('fgrun-and-timeouts');
    expect(slug('HTTP: [Express](x.md), Koa & Fastify')).toBe('http-express-koa--fastify');
  });

  it('numbers a repeated heading and skips headings in code blocks', () => {
    const page = '# A\n\n## Notes\n\n```sh\n# not a heading\n```\n\n## Notes\n<a id="kept"></a>\n';
    expect([...anchors(page)]).toEqual(['a', 'notes', 'notes-1', 'kept']);
  });

  it('finds the links outside code, inline, as images, as references and in HTML', () => {
    const page = [
      'See [a](a.md#x), ![b](b.png) and `[not](c.md)`.',
      '```md',
      '[not](d.md)',
      '```',
      '[ref]: e.md',
      '<img src="f.png">',
    ].join('\n');
    expect(links(page)).toEqual([
      { target: 'a.md#x', line: 1 },
      { target: 'b.png', line: 1 },
      { target: 'e.md', line: 5 },
      { target: 'f.png', line: 6 },
    ]);
  });
});

describe('the link check', () => {
  it('reports a missing file, a missing anchor and a link out of the repository', () => {
    expect(problem('docs/README.md', 'nowhere.md')).toBe('nowhere.md: no file docs/nowhere.md');
    expect(problem('docs/README.md', 'engine.md#no-such-heading')).toBe(
      'engine.md#no-such-heading: docs/engine.md has no heading #no-such-heading',
    );
    expect(problem('README.md', '../outside.md')).toBe('../outside.md leaves the repository');
    expect(problem('README.md', 'docs/errors.md#err_timeout')).toBeUndefined();
    expect(problem('README.md', 'https://example.com/x#y')).toBeUndefined();
  });
});
