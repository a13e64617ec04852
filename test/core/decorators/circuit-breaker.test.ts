import { CircuitBreaker, CircuitOpenError, Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

function engine(): { clock: ManualClock; fg: Floodgate } {
  const clock = new ManualClock(1000);
  return { clock, fg: new Floodgate({ clock }) };
}

class LookupError extends Error {}
class NotFoundError extends Error {}

/** Opens after the second error in its window, probes after 5 s. */
const TWO_ERRORS = { strategy: 'errorCount', threshold: 1, minRequestAmount: 1, retryTimeoutMs: 5000 } as const;

describe('@CircuitBreaker', () => {
  it('rethrows the business error it traced, unchanged', () => {
    const { fg } = engine();
    const failure = new LookupError('down');
    class Inventory {
      @CircuitBreaker({ ...TWO_ERRORS, floodgate: fg })
      count(): number {
        throw failure;
      }
    }
    const inventory = new Inventory();
    let thrown: unknown;
    try {
      inventory.count();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBe(failure);
    expect(fg.stats('Inventory.count')?.lastSecond.error).toBe(1);
  });

  it('opens after the errors its rule allows and then blocks with a CircuitOpenError', () => {
    const { fg } = engine();
    let calls = 0;
    class Inventory {
      @CircuitBreaker({ ...TWO_ERRORS, floodgate: fg })
      count(): number {
        calls++;
        throw new LookupError('down');
      }
    }
    const inventory = new Inventory();
    expect(() => inventory.count()).toThrow(LookupError);
    expect(() => inventory.count()).toThrow(LookupError);
    expect(() => inventory.count()).toThrow(CircuitOpenError);
    expect(calls).toBe(2);
    expect(fg.circuitState('Inventory.count')).toEqual([expect.objectContaining({ state: 'open' })]);
  });

  it('answers failures and the open circuit with the fallback', () => {
    const { fg } = engine();
    const seen: string[] = [];
    class Inventory {
      @CircuitBreaker({ ...TWO_ERRORS, floodgate: fg, fallback: 'cached' })
      count(sku: string): number {
        throw new LookupError(`down for ${sku}`);
      }
      cached(sku: string, error: Error): number {
        seen.push(`${sku}: ${error.name}`);
        return 0;
      }
    }
    const inventory = new Inventory();
    expect([inventory.count('a'), inventory.count('b'), inventory.count('c')]).toEqual([0, 0, 0]);
    expect(seen).toEqual(['a: Error', 'b: Error', 'c: CircuitOpenError']);
  });

  it('traces the rejection of an async method and opens on it', async () => {
    const { fg } = engine();
    class Feed {
      @CircuitBreaker({ ...TWO_ERRORS, floodgate: fg })
      async latest(): Promise<string[]> {
        throw new LookupError('down');
      }
    }
    const feed = new Feed();
    await expect(feed.latest()).rejects.toBeInstanceOf(LookupError);
    await expect(feed.latest()).rejects.toBeInstanceOf(LookupError);
    await expect(feed.latest()).rejects.toMatchObject({ code: 'ERR_CIRCUIT_OPEN', resource: 'Feed.latest' });
  });

  it('holds the entry of a method that returns a promise without being async until it settles', async () => {
    const { fg } = engine();
    const pending: Array<(error: Error) => void> = [];
    class Feed {
      @CircuitBreaker({ ...TWO_ERRORS, floodgate: fg })
      latest(): Promise<string[]> {
        return new Promise((_resolve, reject) => pending.push(reject));
      }
    }
    const feed = new Feed();
    const first = feed.latest();
    const second = feed.latest();
    expect(fg.stats('Feed.latest')?.concurrency).toBe(2);
    pending.forEach((reject) => reject(new LookupError('down')));
    await expect(first).rejects.toBeInstanceOf(LookupError);
    await expect(second).rejects.toBeInstanceOf(LookupError);
    expect(fg.stats('Feed.latest')?.concurrency).toBe(0);
    expect(() => feed.latest()).toThrow(CircuitOpenError);
  });

  it('neither traces nor hands to the fallback an error listed in exceptionsToIgnore', () => {
    const { fg } = engine();
    const fallback = jest.fn(() => -1);
    class Inventory {
      @CircuitBreaker({ ...TWO_ERRORS, floodgate: fg, fallback, exceptionsToIgnore: [NotFoundError] })
      count(): number {
        throw new NotFoundError('no such sku');
      }
    }
    const inventory = new Inventory();
    for (let i = 0; i < 3; i++) expect(() => inventory.count()).toThrow(NotFoundError);
    expect(fallback).not.toHaveBeenCalled();
    expect(fg.stats('Inventory.count')?.lastSecond.error).toBe(0);
    expect(fg.circuitState('Inventory.count')).toEqual([expect.objectContaining({ state: 'closed' })]);
  });

  it('takes a predicate as exceptionsToIgnore', () => {
    const { fg } = engine();
    class Inventory {
      @CircuitBreaker({
        ...TWO_ERRORS,
        floodgate: fg,
        fallback: () => -1,
        exceptionsToIgnore: (error) => error instanceof NotFoundError,
      })
      count(missing: boolean): number {
        throw missing ? new NotFoundError('no such sku') : new LookupError('down');
      }
    }
    const inventory = new Inventory();
    expect(() => inventory.count(true)).toThrow(NotFoundError);
    expect(inventory.count(false)).toBe(-1);
  });

  it('closes again after a successful probe once retryTimeoutMs has passed', async () => {
    const { clock, fg } = engine();
    let failing = true;
    class Inventory {
      @CircuitBreaker({ ...TWO_ERRORS, floodgate: fg })
      count(): number {
        if (failing) throw new LookupError('down');
        return 42;
      }
    }
    const inventory = new Inventory();
    expect(() => inventory.count()).toThrow(LookupError);
    expect(() => inventory.count()).toThrow(LookupError);
    expect(() => inventory.count()).toThrow(CircuitOpenError);
    failing = false;
    await clock.advance(5000);
    expect(inventory.count()).toBe(42);
    expect(fg.circuitState('Inventory.count')).toEqual([expect.objectContaining({ state: 'closed' })]);
  });
});
