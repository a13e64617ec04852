import diagnosticsChannel from 'node:diagnostics_channel';
import { EventHub } from '../../../packages/core/src/kernel/events';

interface Events {
  ping: { n: number };
}

describe('EventHub', () => {
  const channel = 'floodgate-test:ping';

  it('has no audience while nobody listens or subscribes, so callers build no payload', () => {
    const hub = new EventHub<Events>({ ping: channel }, {});
    expect(hub.has('ping')).toBe(false);
  });

  it('has an audience while a diagnostics channel subscriber is there, and none once it leaves', () => {
    const hub = new EventHub<Events>({ ping: channel }, {});
    const subscriber = (): void => undefined;
    diagnosticsChannel.subscribe(channel, subscriber);
    expect(hub.has('ping')).toBe(true);
    diagnosticsChannel.unsubscribe(channel, subscriber);
    expect(hub.has('ping')).toBe(false);
  });

  it('has an audience while a listener is there, and none once it is removed', () => {
    const hub = new EventHub<Events>({ ping: channel }, {});
    const off = hub.on('ping', () => undefined);
    expect(hub.has('ping')).toBe(true);
    off();
    expect(hub.has('ping')).toBe(false);
  });

  it('publishes { floodgate: source, event } to subscribers', () => {
    const source = { name: 'engine' };
    const hub = new EventHub<Events>({ ping: channel }, source);
    const messages: unknown[] = [];
    const subscriber = (message: unknown): void => {
      messages.push(message);
    };
    diagnosticsChannel.subscribe(channel, subscriber);
    try {
      const event = { n: 1 };
      hub.emit('ping', event);
      expect(messages).toEqual([{ floodgate: source, event }]);
      expect((messages[0] as { event: unknown }).event).toBe(event);
    } finally {
      diagnosticsChannel.unsubscribe(channel, subscriber);
    }
  });
});
