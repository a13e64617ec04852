import { EventHub } from '../../../packages/core/src/kernel/events';

interface Events {
  ping: { n: number };
}

function hub(): EventHub<Events> {
  return new EventHub<Events>({ ping: 'floodgate-test:ping' });
}

describe('EventHub', () => {
  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());

  it('reports each throwing listener once, with its stack, then only counts its errors (#12)', () => {
    const events = hub();
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
    expect(warn).toHaveBeenNthCalledWith(1, expect.stringContaining('first broke'), expect.objectContaining({ code: 'FLOODGATE_LISTENER_ERROR', detail: expect.stringContaining('Error: first broke') }));
    expect(warn).toHaveBeenNthCalledWith(2, expect.stringContaining('second broke'), expect.objectContaining({ code: 'FLOODGATE_LISTENER_ERROR', detail: undefined }));
  });

  it('reports a listener added again after its removal no more than once', () => {
    const events = hub();
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
