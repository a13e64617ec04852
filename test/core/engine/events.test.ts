import diagnosticsChannel from 'node:diagnostics_channel';
import { DIAGNOSTICS_CHANNELS, type BlockEvent, type DiagnosticsMessage } from '@floodgate/core/metrics';
import { Floodgate, type FloodgateEventMap } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

/** Collects what a channel publishes until `stop()`. */
function listen<K extends keyof FloodgateEventMap>(event: K): { messages: DiagnosticsMessage<K>[]; stop: () => void } {
  const messages: DiagnosticsMessage<K>[] = [];
  const onMessage = (message: unknown): void => {
    messages.push(message as DiagnosticsMessage<K>);
  };
  diagnosticsChannel.subscribe(DIAGNOSTICS_CHANNELS[event], onMessage);
  return { messages, stop: () => diagnosticsChannel.unsubscribe(DIAGNOSTICS_CHANNELS[event], onMessage) };
}

const engine = (): Floodgate => new Floodgate({ clock: new ManualClock() });

describe('diagnostics channels', () => {
  it('publishes a blocked call on floodgate:block with the engine, the resource, the error and the rule id', () => {
    const fg = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 0 }]);
    const block = listen('block');
    try {
      const error = fg.tryEntry('r', { origin: 'app' });
      expect(block.messages).toEqual([
        { floodgate: fg, event: { resource: 'r', origin: 'app', error, ruleId: 'flow#0', priority: 'default' } },
      ]);
    } finally {
      block.stop();
    }
  });

  it('publishes a passed call on floodgate:pass', () => {
    const fg = engine();
    const pass = listen('pass');
    try {
      fg.entry('r', { acquireCount: 2, priority: 'critical' }).exit();
      expect(pass.messages).toEqual([
        { floodgate: fg, event: { resource: 'r', origin: '', acquireCount: 2, priority: 'critical' } },
      ]);
    } finally {
      pass.stop();
    }
  });

  it('publishes each breaker transition on floodgate:circuit', async () => {
    const clock = new ManualClock();
    const fg = new Floodgate({ clock });
    fg.loadCircuitBreakerRules([
      { resource: 'r', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 1000 },
    ]);
    const circuit = listen('circuitStateChange');
    try {
      const failing = fg.entry('r');
      failing.traceError(new Error('down'));
      failing.exit();
      await clock.advance(1000);
      fg.entry('r').exit();
      expect(
        circuit.messages.map(({ floodgate, event }) => [floodgate === fg, event.ruleId, event.from, event.to]),
      ).toEqual([
        [true, 'circuitBreaker#0', 'closed', 'open'],
        [true, 'circuitBreaker#0', 'open', 'halfOpen'],
        [true, 'circuitBreaker#0', 'halfOpen', 'closed'],
      ]);
    } finally {
      circuit.stop();
    }
  });

  it('publishes rule changes on floodgate:rules and rejected rule sets on floodgate:rules-rejected', () => {
    const fg = engine();
    const rules = listen('rulesLoaded');
    const rejected = listen('rulesRejected');
    try {
      fg.loadFlowRules([{ resource: 'r', threshold: 5 }], { source: 'file' });
      expect(() => fg.loadFlowRules([{ resource: 'r', threshold: -1 }], { source: 'file' })).toThrow();
      expect(rules.messages.map(({ event }) => [event.source, event.resources, event.rules.flow.length])).toEqual([
        ['file', ['r'], 1],
      ]);
      expect(
        rejected.messages.map(({ floodgate, event }) => [floodgate === fg, event.source, event.issues[0]!.path]),
      ).toEqual([[true, 'file', 'flow[0].threshold']]);
    } finally {
      rules.stop();
      rejected.stop();
    }
  });

  it('publishes warnings on floodgate:warning', () => {
    const fg = new Floodgate({ clock: new ManualClock(), maxResources: 1 });
    const warning = listen('warning');
    const emitted = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      fg.entry('a').exit();
      fg.entry('b').exit();
      expect(warning.messages.map(({ event }) => event.code)).toEqual(['FLOODGATE_MAX_RESOURCES']);
    } finally {
      emitted.mockRestore();
      warning.stop();
    }
  });

  it('tells engines apart: each message names the engine that emitted it', () => {
    const a = engine();
    const b = engine();
    a.loadFlowRules([{ resource: 'r', threshold: 0 }]);
    b.loadFlowRules([{ resource: 'r', threshold: 0 }]);
    const block = listen('block');
    try {
      a.tryEntry('r');
      b.tryEntry('r');
      b.tryEntry('r');
      expect(block.messages.map((m) => (m.floodgate === a ? 'a' : m.floodgate === b ? 'b' : '?'))).toEqual([
        'a',
        'b',
        'b',
      ]);
    } finally {
      block.stop();
    }
  });

  it('publishes the very event object that on() listeners receive', () => {
    const fg = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 0 }]);
    const heard: BlockEvent[] = [];
    fg.on('block', (event) => heard.push(event));
    const block = listen('block');
    try {
      fg.tryEntry('r');
      expect(block.messages[0]!.event).toBe(heard[0]);
    } finally {
      block.stop();
    }
  });

  it('calls publish on no channel while nobody subscribes, and stops when the last subscriber leaves', () => {
    const fg = engine();
    fg.loadFlowRules([{ resource: 'r', threshold: 1 }]);
    // A channel with subscribers publishes through another prototype: this spy sees only
    // publishes to channels nobody listens on, which must never happen.
    const idlePublish = jest.spyOn(diagnosticsChannel.Channel.prototype, 'publish');
    // A listener makes the engine emit: the channel must still stay quiet.
    fg.on('block', () => undefined);
    try {
      fg.entry('r').exit();
      fg.tryEntry('r');
      const block = listen('block');
      fg.tryEntry('r');
      block.stop();
      fg.tryEntry('r');
      expect(block.messages).toHaveLength(1);
      expect(idlePublish).not.toHaveBeenCalled();
      for (const name of Object.values(DIAGNOSTICS_CHANNELS))
        expect(diagnosticsChannel.hasSubscribers(name)).toBe(false);
    } finally {
      idlePublish.mockRestore();
    }
  });

  it('names one channel per event, all under floodgate:', () => {
    expect(DIAGNOSTICS_CHANNELS).toEqual({
      pass: 'floodgate:pass',
      block: 'floodgate:block',
      circuitStateChange: 'floodgate:circuit',
      rulesLoaded: 'floodgate:rules',
      rulesRejected: 'floodgate:rules-rejected',
      warning: 'floodgate:warning',
      clusterFallback: 'floodgate:cluster-fallback',
      clusterRecover: 'floodgate:cluster-recover',
      wouldBlock: 'floodgate:would-block',
    });
  });
});
