import { Floodgate } from '@floodgate/core';
import { normalizeRuleSet } from '@floodgate/core/rules';
import { LoadedLayer } from '../../packages/dashboard/src/loaded-layer';

let fg: Floodgate;
const layers: LoadedLayer[] = [];

beforeEach(() => {
  fg = new Floodgate();
});
afterEach(() => {
  for (const layer of layers.splice(0)) layer.close();
});

function layerOf(engine = fg): LoadedLayer {
  const layer = new LoadedLayer(engine);
  layers.push(layer);
  return layer;
}

describe('LoadedLayer', () => {
  it('gives the loaded layer whole, every kind present, without the declared rules', () => {
    fg.declareRules({ flow: [{ resource: 'declared', threshold: 1 }] });
    fg.loadFlowRules([{ resource: 'api', threshold: 2 }]);
    // Every kind, in check order, each empty but flow.
    const kinds = Object.keys(fg.getRules());
    const layer = JSON.parse(layerOf().current().json) as Record<string, unknown[]>;
    expect(Object.keys(layer)).toEqual(kinds);
    expect(layer).toEqual({
      ...Object.fromEntries(kinds.map((kind) => [kind, []])),
      flow: [expect.objectContaining({ resource: 'api', threshold: 2 })],
    });
  });

  it('names the same rules with the same version, in any engine, and other rules with another', () => {
    const other = new Floodgate();
    for (const engine of [fg, other]) engine.loadFlowRules([{ resource: 'api', threshold: 2 }]);
    const layer = layerOf();
    const before = layer.current().version;
    expect(layerOf(other).current().version).toBe(before);
    fg.loadFlowRules([{ resource: 'api', threshold: 3 }]);
    expect(layer.current().version).not.toBe(before);
    fg.loadFlowRules([{ resource: 'api', threshold: 2 }]);
    expect(layer.current().version).toBe(before);
  });

  it('builds the layer once per rule change, however often it is read', () => {
    const layer = layerOf();
    const describe = jest.spyOn(fg, 'describeRules');
    layer.current();
    layer.current();
    expect(describe).toHaveBeenCalledTimes(1);
    fg.loadFlowRules([{ resource: 'api', threshold: 2 }]);
    layer.current();
    layer.current();
    expect(describe).toHaveBeenCalledTimes(2);
  });

  it('holds a write a store has not brought back as the layer, until the engine loads anything', () => {
    const layer = layerOf();
    const before = layer.current();
    const written = layer.wrote(normalizeRuleSet({ flow: [{ resource: 'api', threshold: 9 }] }), before.version);
    expect(layer.current()).toEqual(written);
    expect(JSON.parse(written.json)).toMatchObject({ flow: [{ resource: 'api', threshold: 9 }], authority: [] });
    // Declared rules are no part of the layer: the write still stands.
    fg.declareRules({ flow: [{ resource: 'declared', threshold: 1 }] });
    expect(layer.current()).toEqual(written);
    // The store brings it back (or anything else arrives): the engine's layer is the layer again.
    fg.loadFlowRules([{ resource: 'api', threshold: 9 }]);
    expect(layer.current().version).toBe(written.version);
    fg.loadFlowRules([{ resource: 'api', threshold: 10 }]);
    expect(JSON.parse(layer.current().json).flow).toEqual([expect.objectContaining({ threshold: 10 })]);
  });

  it('drops a write at once when the engine had already moved on when it was made', () => {
    const layer = layerOf();
    const stale = layer.current().version;
    fg.loadFlowRules([{ resource: 'api', threshold: 4 }]);
    layer.wrote(normalizeRuleSet({ flow: [] }), stale);
    expect(JSON.parse(layer.current().json).flow).toEqual([expect.objectContaining({ threshold: 4 })]);
  });
});
