import { createHash } from 'node:crypto';
import type { Floodgate } from '@floodgate/core';
import type { RuleSet } from '@floodgate/core/rules';

/** The loaded layer at one moment: `{ "<kind>": [rules], ... }`, every kind present, as JSON, and its version. */
export interface LayerView {
  /** The layer as JSON, kinds in check order, rules validated and with defaults resolved. */
  readonly json: string;
  /**
   * Names this content (a digest of `json`): an edit says which version it was made on, and one
   * made on another is refused (409). Two instances holding the same rules give the same version.
   */
  readonly version: string;
}

/** A write handed to a store that the engine has not loaded back yet. */
interface Pending {
  readonly view: LayerView;
  /** The engine's version when it was written: while the engine still holds it, the write is the layer. */
  readonly before: string;
}

/**
 * The loaded layer as the dashboard edits it: the rules of every kind loaded into the engine
 * (`describeRules()`'s loaded ones; the kinds read from the engine), built once per rule change and
 * shared by every reader, with its version. A write through a store that reaches the engine later
 * (Redis: when its message arrives) is the layer from the moment it is written until the engine
 * loads anything, so an edit that follows at once is made on it, not on the rules it replaced,
 * and no edit is lost in between.
 */
export class LoadedLayer {
  private engineView: LayerView | undefined;
  private pending: Pending | undefined;
  private readonly stop: () => void;

  constructor(private readonly fg: Floodgate) {
    this.stop = fg.on('rulesLoaded', () => (this.engineView = undefined));
  }

  /** The kinds of the engine, in check order: every key of a layer. */
  get kinds(): string[] {
    return Object.keys(this.fg.getRules());
  }

  /** The layer now: a pending write while the engine has loaded nothing since it, else the engine's. */
  current(): LayerView {
    const engine = this.engine();
    if (this.pending !== undefined) {
      if (engine.version === this.pending.before) return this.pending.view;
      this.pending = undefined;
    }
    return engine;
  }

  /**
   * A store was given `rules` (validated, every kind present) on the layer of version `before`:
   * they are the layer until the engine loads anything.
   */
  wrote(rules: Partial<RuleSet>, before: string): LayerView {
    const layer: Record<string, unknown> = {};
    for (const kind of this.kinds) layer[kind] = (rules as Record<string, unknown>)[kind] ?? [];
    const view = viewOf(JSON.stringify(layer));
    this.pending = { view, before };
    return view;
  }

  /** Stops following the engine's rule changes. */
  close(): void {
    this.stop();
  }

  private engine(): LayerView {
    if (this.engineView === undefined) {
      const layer: Record<string, unknown[]> = {};
      for (const kind of this.kinds) layer[kind] = [];
      for (const d of this.fg.describeRules()) if (d.layer === 'loaded') layer[d.kind]!.push(d.rule);
      this.engineView = viewOf(JSON.stringify(layer));
    }
    return this.engineView;
  }
}

function viewOf(json: string): LayerView {
  return { json, version: createHash('sha256').update(json, 'utf8').digest('base64url').slice(0, 22) };
}
