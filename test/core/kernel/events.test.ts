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

  describe('listener errors', () => {
    let warn: jest.SpyInstance;
    beforeEach(() => {
      warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    });
    afterEach(() => warn.mockRestore());

    it('reports each throwing listener once, with its stack, then only counts its errors (#12)', () => {
      const events = new EventHub<Events>({ ping: channel }, {});
      const seen: number[] = [];
      events.on('ping', () => {
        throw new Error('first broke');
      });
      events.on('ping', () => {
        throw 'second broke';
      });
      events.on('ping', (e) => seen.push(e.n));
      for (let n = 0; n < 1000; n++) events.emit('ping', { n });
      expect(seen).toHaveLength(1000);
      expect(events.listenerErrors).toBe(2000);
      expect(warn).toHaveBeenCalledTimes(2);
      expect(warn).toHaveBeenNthCalledWith(
        1,
        expect.stringContaining('first broke'),
        expect.objectContaining({
          code: 'FLOODGATE_LISTENER_ERROR',
          detail: expect.stringContaining('Error: first broke'),
        }),
      );
      expect(warn).toHaveBeenNthCalledWith(
        2,
        expect.stringContaining('second broke'),
        expect.objectContaining({ code: 'FLOODGATE_LISTENER_ERROR', detail: undefined }),
      );
    });

    it('reports a listener added again after its removal no more than once', () => {
      const events = new EventHub<Events>({ ping: channel }, {});
      const broken = (): void => {
        throw new Error('broke');
      };
      const off = events.on('ping', broken);
      events.emit('ping', { n: 1 });
      off();
      events.on('ping', broken);
      events.emit('ping', { n: 2 });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(events.listenerErrors).toBe(2);
    });
  });
});
