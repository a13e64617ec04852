import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What a copy of `@floodgate/core` exports (its root entry point). */
export type CoreModule = typeof import('@floodgate/core');

/**
 * A fresh copy of `@floodgate/core`'s build, loaded as a module instance of its own, with the
 * system rule kind compiled out of it or not (issue #30's A/B: what a call with no system rule
 * pays for the kind's existence). Both sides of the A/B are copies, so their call sites are
 * warmed alike (only by the cases that use them), unlike the shared engine's.
 *
 * The copy lives in the core package's own `node_modules/.core-copies/`, one per process, so it
 * resolves the core's dependencies as the core does: the core's `lru-cache` 11, not the older one
 * hoisted to the repository's `node_modules`. It is removed when the process exits. The kind is
 * compiled out by removing it from the build's `RULE_KINDS` list; loading fails loudly if that
 * list is no longer written as expected, or if the copy does not then refuse system rules (or,
 * kept, take them).
 */
export function loadCoreCopy(withoutSystemKind: boolean): CoreModule {
  const source = dirname(require.resolve('@floodgate/core'));
  const target = join(
    source,
    '..',
    'node_modules',
    '.core-copies',
    `${process.pid}-${withoutSystemKind ? 'without' : 'with'}-system`,
  );
  rmSync(target, { recursive: true, force: true });
  process.on('exit', () => rmSync(target, { recursive: true, force: true }));
  cpSync(source, target, { recursive: true, filter: (path) => !path.endsWith('.map') && !path.endsWith('.d.ts') });
  if (withoutSystemKind) {
    const kinds = join(target, 'engine', 'kinds.js');
    const text = readFileSync(kinds, 'utf8');
    const entry = /^\s*system_kind_1\.systemKind,\r?\n/m;
    const list = /exports\.RULE_KINDS = \[[^\]]*\]/.exec(text)?.[0];
    if (list === undefined || !entry.test(list)) {
      throw new Error(`${kinds}: RULE_KINDS no longer lists system_kind_1.systemKind as expected; update core-copy.ts`);
    }
    writeFileSync(kinds, text.replace(list, list.replace(entry, '')));
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a copy at a path known only now
  const copy = require(join(target, 'index.js')) as CoreModule;
  if (takesSystemRules(copy) === withoutSystemKind) {
    throw new Error(`${target}: the copy ${withoutSystemKind ? 'still takes' : 'does not take'} system rules`);
  }
  return copy;
}

/** Whether an engine of `core` loads a system rule (a copy without the kind refuses the field). */
function takesSystemRules(core: CoreModule): boolean {
  try {
    new core.Floodgate().loadRules({ system: [{ maxQps: 1e12 }] });
    return true;
  } catch {
    return false;
  }
}
