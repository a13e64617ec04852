import {
  BlockError,
  CircuitBreaker,
  CircuitOpenError,
  Floodgate,
  FlowBlockError,
  HotParam,
  HotParamBlockError,
  RateLimit,
} from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';

function engine(): { clock: ManualClock; fg: Floodgate } {
  const clock = new ManualClock(1000);
  return { clock, fg: new Floodgate({ clock }) };
}

class LookupError extends Error {}

/** Opens after the second error in its window. */
const TWO_ERRORS = { strategy: 'errorCount', threshold: 1, minRequestAmount: 1, retryTimeoutMs: 5000 } as const;

describe('stacked decorators', () => {
  it('share one resource for all their rules', () => {
    const { fg } = engine();
    class Orders {
      @RateLimit({ threshold: 10, floodgate: fg })
      @CircuitBreaker({ ...TWO_ERRORS })
      place(): void {}
    }
    new Orders();
    expect(fg.getRules().flow.map((rule) => rule.resource)).toEqual(['Orders.place']);
    expect(fg.getRules().circuitBreakers.map((rule) => rule.resource)).toEqual(['Orders.place']);
  });

  it('make one entry per call, not one per decorator', () => {
    const { fg } = engine();
    class Orders {
      @RateLimit({ threshold: 10, floodgate: fg })
      @RateLimit({ threshold: 5, metric: 'concurrency' })
      @CircuitBreaker({ ...TWO_ERRORS })
      place(): string {
        return 'placed';
      }
    }
    const orders = new Orders();
    for (let i = 0; i < 3; i++) orders.place();
    expect(fg.stats('Orders.place')?.lastSecond.pass).toBe(3);
  });

  it('spend no budget of one on calls another refuses: an abusive caller leaves the rate limit to the rest', () => {
    const { fg } = engine();
    class Profiles {
      @RateLimit({ threshold: 10, floodgate: fg })
      @HotParam({ paramIndex: 0, threshold: 2 })
      read(userId: string): string {
        return userId;
      }
    }
    const profiles = new Profiles();
    for (let i = 0; i < 50; i++) {
      try {
        profiles.read('mallory');
      } catch (error) {
        expect(error).toBeInstanceOf(HotParamBlockError);
      }
    }
    for (let i = 0; i < 8; i++) expect(profiles.read(`user-${i}`)).toBe(`user-${i}`);
    expect(() => profiles.read('late')).toThrow(FlowBlockError);
  });

  it('check flow before the circuit breaker whatever order they are written in', () => {
    const { fg } = engine();
    class FlowFirst {
      @RateLimit({ threshold: 2, floodgate: fg })
      @CircuitBreaker({ ...TWO_ERRORS })
      call(): void {
        throw new LookupError('down');
      }
    }
    class BreakerFirst {
      @CircuitBreaker({ ...TWO_ERRORS, floodgate: fg })
      @RateLimit({ threshold: 2 })
      call(): void {
        throw new LookupError('down');
      }
    }
    for (const service of [new FlowFirst(), new BreakerFirst()]) {
      expect(() => service.call()).toThrow(LookupError);
      expect(() => service.call()).toThrow(LookupError);
      // The breaker is open now and the flow rule's two passes are spent: flow answers first.
      expect(() => service.call()).toThrow(FlowBlockError);
    }
  });

  it('check hotspot rules before flow rules whatever order they are written in', () => {
    const { fg } = engine();
    class FlowOnTop {
      @RateLimit({ threshold: 0, floodgate: fg })
      @HotParam({ paramIndex: 0, threshold: 0 })
      get(_id: string): void {}
    }
    class HotParamOnTop {
      @HotParam({ paramIndex: 0, threshold: 0, floodgate: fg })
      @RateLimit({ threshold: 0 })
      get(_id: string): void {}
    }
    expect(() => new FlowOnTop().get('a')).toThrow(HotParamBlockError);
    expect(() => new HotParamOnTop().get('a')).toThrow(HotParamBlockError);
  });

  it('answer a block by one decorator with the fallback given on another', () => {
    const { fg } = engine();
    class Orders {
      @RateLimit({ threshold: 0, floodgate: fg })
      @CircuitBreaker({ ...TWO_ERRORS, fallback: () => 'later' })
      place(): string {
        return 'placed';
      }
    }
    expect(new Orders().place()).toBe('later');
  });
});

describe('blockHandler and fallback', () => {
  it('calls blockHandler with the arguments and the BlockError', () => {
    const { fg } = engine();
    const calls: unknown[][] = [];
    class Search {
      @RateLimit({ threshold: 0, floodgate: fg, blockHandler: (...args: unknown[]) => (calls.push(args), 'busy') })
      find(query: string, page: number): string {
        return `${query}#${page}`;
      }
    }
    expect(new Search().find('cats', 2)).toBe('busy');
    expect(calls).toEqual([['cats', 2, expect.any(FlowBlockError)]]);
  });

  it('prefers blockHandler over fallback for a blocked call', () => {
    const { fg } = engine();
    const fallback = jest.fn(() => 'fallback');
    class Search {
      @RateLimit({ threshold: 0, floodgate: fg, blockHandler: () => 'blockHandler', fallback })
      find(): string {
        return 'result';
      }
    }
    expect(new Search().find()).toBe('blockHandler');
    expect(fallback).not.toHaveBeenCalled();
  });

  it('gives a blocked call to fallback when there is no blockHandler', () => {
    const { fg } = engine();
    class Search {
      @RateLimit({
        threshold: 0,
        floodgate: fg,
        fallback: (query: string, error: unknown) => `${query}: ${(error as BlockError).code}`,
      })
      find(query: string): string {
        return query;
      }
    }
    expect(new Search().find('cats')).toBe('cats: ERR_FLOW_BLOCKED');
  });

  it('gives a business error to fallback, never to blockHandler', () => {
    const { fg } = engine();
    const blockHandler = jest.fn(() => 'blocked');
    const failure = new LookupError('down');
    class Search {
      @CircuitBreaker({
        ...TWO_ERRORS,
        floodgate: fg,
        blockHandler,
        fallback: (_q: string, error: unknown) => (error === failure ? 'fell back' : 'other'),
      })
      find(_query: string): string {
        throw failure;
      }
    }
    expect(new Search().find('cats')).toBe('fell back');
    expect(blockHandler).not.toHaveBeenCalled();
  });

  it('rethrows a business error when there is only a blockHandler', () => {
    const { fg } = engine();
    class Search {
      @CircuitBreaker({ ...TWO_ERRORS, floodgate: fg, blockHandler: () => 'blocked' })
      find(): string {
        throw new LookupError('down');
      }
    }
    expect(() => new Search().find()).toThrow(LookupError);
  });

  it('calls a handler named by a method on the same instance, with its this', () => {
    const { fg } = engine();
    class Search {
      private readonly cache = new Map([['cats', 'cached cats']]);
      @RateLimit({ threshold: 0, floodgate: fg, blockHandler: 'fromCache' })
      find(query: string): string {
        return query;
      }
      fromCache(query: string, error: BlockError): string {
        return `${this.cache.get(query)} (${error.code})`;
      }
    }
    expect(new Search().find('cats')).toBe('cached cats (ERR_FLOW_BLOCKED)');
  });

  it('calls a handler function with the same this as the method', () => {
    const { fg } = engine();
    let seen: unknown;
    class Search {
      @RateLimit({
        threshold: 0,
        floodgate: fg,
        fallback(this: unknown) {
          // eslint-disable-next-line @typescript-eslint/no-this-alias
          seen = this;
          return 'x';
        },
      })
      find(): string {
        return 'result';
      }
    }
    const search = new Search();
    search.find();
    expect(seen).toBe(search);
  });

  it('calls a handler named by a static method of the class for a static method', () => {
    const { fg } = engine();
    class Stats {
      static label = 'stale';
      @RateLimit({ threshold: 0, floodgate: fg, blockHandler: 'stale' })
      static compute(n: number): string {
        return `fresh ${n}`;
      }
      static stale(n: number): string {
        return `${this.label} ${n}`;
      }
    }
    expect(Stats.compute(3)).toBe('stale 3');
  });

  it('surfaces the error a throwing blockHandler throws', () => {
    const { fg } = engine();
    const own = new Error('handler failed');
    class Search {
      @RateLimit({
        threshold: 0,
        floodgate: fg,
        blockHandler: () => {
          throw own;
        },
        fallback: () => 'never',
      })
      find(): string {
        return 'result';
      }
    }
    expect(() => new Search().find()).toThrow(own);
  });

  it('rejects with the error a throwing fallback throws for an async method', async () => {
    const { fg } = engine();
    const own = new Error('fallback failed');
    class Search {
      @CircuitBreaker({
        ...TWO_ERRORS,
        floodgate: fg,
        fallback: () => {
          throw own;
        },
      })
      async find(): Promise<string> {
        throw new LookupError('down');
      }
    }
    await expect(new Search().find()).rejects.toBe(own);
  });

  it('resolves an async method blocked by an open circuit to what its blockHandler returns', async () => {
    const { fg } = engine();
    class Search {
      @CircuitBreaker({
        ...TWO_ERRORS,
        floodgate: fg,
        blockHandler: async (_q: string, error: unknown) => (error instanceof CircuitOpenError ? 'open' : '?'),
      })
      async find(_query: string): Promise<string> {
        throw new LookupError('down');
      }
    }
    const search = new Search();
    await expect(search.find('a')).rejects.toBeInstanceOf(LookupError);
    await expect(search.find('a')).rejects.toBeInstanceOf(LookupError);
    await expect(search.find('a')).resolves.toBe('open');
  });
});

describe('a guarded method', () => {
  it('runs with its own this and arguments and returns its own value', () => {
    const { fg } = engine();
    const result = { id: 1 };
    let seen: { self?: unknown; args?: unknown[] } = {};
    class Repo {
      @RateLimit({ threshold: 10, floodgate: fg })
      find(...args: unknown[]): object {
        seen = { self: this, args };
        return result;
      }
    }
    const repo = new Repo();
    const arg = { q: 'x' };
    expect(repo.find(arg, 2)).toBe(result);
    expect(seen.self).toBe(repo);
    expect(seen.args).toEqual([arg, 2]);
    expect(seen.args?.[0]).toBe(arg);
  });

  it('keeps the name and arity of the method it replaces', () => {
    const { fg } = engine();
    class Repo {
      @RateLimit({ threshold: 10, floodgate: fg })
      findMany(_a: string, _b: number): void {}
    }
    expect(Repo.prototype.findMany.name).toBe('findMany');
    expect(Repo.prototype.findMany.length).toBe(2);
  });

  it('records the response time of an async method up to its settling', async () => {
    const { clock, fg } = engine();
    class Repo {
      @RateLimit({ threshold: 10, floodgate: fg })
      async slow(): Promise<string> {
        await clock.sleep(300);
        return 'done';
      }
    }
    const pending = new Repo().slow();
    while (clock.pendingSleeps === 0) await new Promise(setImmediate);
    await clock.advance(300);
    await expect(pending).resolves.toBe('done');
    expect(fg.stats('Repo.slow')?.lastSecond.totalRtMs).toBe(300);
  });

  it('finds its class on the first call when no instance was ever constructed', () => {
    const { fg } = engine();
    class Repo {
      @RateLimit({ threshold: 10, floodgate: fg })
      find(): string {
        return 'found';
      }
    }
    const bare = Object.create(Repo.prototype) as Repo;
    expect(bare.find()).toBe('found');
    expect(fg.stats('Repo.find')?.lastSecond.pass).toBe(1);
  });
});

describe('timeoutMs on a guarded method', () => {
  const never = (): Promise<string> => new Promise<string>(() => undefined);

  it.each([
    [
      '@RateLimit',
      (fg: Floodgate) => RateLimit({ threshold: 10, metric: 'concurrency', timeoutMs: 100, floodgate: fg }),
    ],
    ['@CircuitBreaker', (fg: Floodgate) => CircuitBreaker({ ...TWO_ERRORS, timeoutMs: 100, floodgate: fg })],
    ['@HotParam', (fg: Floodgate) => HotParam({ paramIndex: 0, threshold: 10, timeoutMs: 100, floodgate: fg })],
  ])(
    'answers a call that has not settled by timeoutMs with a TimeoutError, and frees its slot once it settles, with %s (#12, #24)',
    async (_name, decorator) => {
      const { fg, clock } = engine();
      let finish!: (value: string) => void;
      class Api {
        @decorator(fg)
        async fetch(_id: string): Promise<string> {
          return new Promise<string>((resolve) => (finish = resolve));
        }
      }
      const call = expect(new Api().fetch('a')).rejects.toMatchObject({
        code: 'ERR_TIMEOUT',
        resource: 'Api.fetch',
        timeoutMs: 100,
      });
      expect(fg.stats('Api.fetch')!.concurrency).toBe(1);
      await clock.advance(100);
      await call;
      expect(fg.stats('Api.fetch')!.concurrency).toBe(1);
      finish('late');
      await new Promise((resolve) => setImmediate(resolve));
      expect(fg.stats('Api.fetch')!.concurrency).toBe(0);
    },
  );

  it('runs no more calls of a method at once than its concurrency limit, timeouts or not (#24)', async () => {
    const { fg, clock } = engine();
    const work: ((value: string) => void)[] = [];
    let running = 0;
    let most = 0;
    class Api {
      @RateLimit({ threshold: 3, metric: 'concurrency', timeoutMs: 100, floodgate: fg })
      async fetch(): Promise<string> {
        most = Math.max(most, ++running);
        try {
          return await new Promise<string>((resolve) => work.push(resolve)); // ignores the timeout
        } finally {
          running--;
        }
      }
    }
    const api = new Api();
    const outcomes: Promise<unknown>[] = [];
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 4; i++) outcomes.push(api.fetch().catch((e: unknown) => (e as { code: string }).code));
      await clock.advance(100);
      work.shift()?.('late');
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(most).toBe(3);
    expect(new Set(await Promise.all(outcomes))).toEqual(new Set(['ERR_TIMEOUT', 'ERR_FLOW_BLOCKED']));
  });

  it('gives the TimeoutError to the fallback', async () => {
    const { fg, clock } = engine();
    class Api {
      @RateLimit({ threshold: 10, timeoutMs: 100, fallback: 'cached', floodgate: fg })
      async fetch(_id: string): Promise<string> {
        return never();
      }
      cached(id: string, error: unknown): string {
        return `${id}:${(error as { code: string }).code}`;
      }
    }
    const call = new Api().fetch('a');
    await clock.advance(100);
    await expect(call).resolves.toBe('a:ERR_TIMEOUT');
  });

  it('fails at decoration time on a bad timeoutMs', () => {
    expect(() => {
      class Api {
        @RateLimit({ threshold: 10, timeoutMs: 0 })
        fetch(): void {}
      }
      return Api;
    }).toThrow('timeoutMs');
  });
});
