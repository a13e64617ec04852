import { Floodgate, RuleValidationError, type BlockError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { HttpGuard } from '@floodgate/core/http';
import { FakeResponse, FakeSocket } from './fake-response';

type Req = { readonly user?: string; readonly origin?: string };
type Fallback = (req: Req, error: BlockError) => string;

function engine(): { fg: Floodgate; clock: ManualClock } {
  const clock = new ManualClock(1000);
  return { fg: new Floodgate({ clock }), clock };
}

function issuesOf(make: () => unknown): { path: string; message: string }[] {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(RuleValidationError);
    return [...(error as RuleValidationError).issues];
  }
  throw new Error('expected a RuleValidationError');
}

describe('HttpGuard options', () => {
  it('rejects an unknown option, naming it', () => {
    expect(issuesOf(() => HttpGuard.resilience({ rout: {} }, 'resilience()'))).toEqual([
      {
        path: 'rout',
        message: expect.stringContaining(
          'unknown field (allowed: floodgate, origin, priority, onBlock, fallback, headers, isFailure, user, wouldBlockHeader, routes, everyRoute, groups)',
        ),
      },
    ]);
  });

  it('names the factory in the error message', () => {
    expect(() => HttpGuard.resilience({ rout: {} }, 'resilience()')).toThrow(
      'Invalid resilience() options: rout: unknown field',
    );
  });

  it('rejects a route pattern that does not parse, naming it', () => {
    expect(issuesOf(() => HttpGuard.resilience({ routes: { 'GET users': {} } }, 'resilience()'))).toEqual([
      {
        path: "routes['GET users']",
        message: expect.stringContaining('is not a valid route pattern: path "users" must start with \'/\''),
      },
    ]);
  });

  it('rejects two patterns for the same route', () => {
    expect(issuesOf(() => HttpGuard.resilience({ routes: { '/a': {}, '* /a/': {} } }, 'resilience()'))).toEqual([
      { path: "routes['* /a/']", message: "is the same route as routes['/a'] (* /a)" },
    ]);
  });

  it('rejects an invalid rule, naming the field under its route', () => {
    const { fg } = engine();
    expect(
      issuesOf(() =>
        HttpGuard.resilience(
          { floodgate: fg, routes: { 'GET /a': { rateLimit: [{ threshold: 1 }, { threshold: -1 }] } } },
          'resilience()',
        ),
      ),
    ).toEqual([{ path: "routes['GET /a'].rateLimit[1].threshold", message: 'must be a finite number >= 0, got -1' }]);
  });

  it('rejects an unknown field of a route', () => {
    expect(issuesOf(() => HttpGuard.resilience({ routes: { 'GET /a': { ratelimit: {} } } }, 'resilience()'))).toEqual([
      { path: "routes['GET /a'].ratelimit", message: expect.stringContaining('unknown field') },
    ]);
  });

  it('rejects a hotspot param that is not a parameter of the pattern', () => {
    expect(
      issuesOf(() =>
        HttpGuard.resilience(
          { routes: { 'GET /users/:id': { hotParam: { param: 'uid', threshold: 1 } } } },
          'resilience()',
        ),
      ),
    ).toContainEqual({
      path: "routes['GET /users/:id'].hotParam.param",
      message: `"uid" is not a parameter of the route (it has: 'id'): the rule would limit nothing`,
    });
  });

  it('rejects paramIndex on an HTTP hotspot rule, pointing to param', () => {
    expect(
      issuesOf(() => HttpGuard.route('hotParam', { param: 'id', paramIndex: 0, threshold: 1 }, 'hotParam()')),
    ).toContainEqual({
      path: 'paramIndex',
      message: expect.stringContaining('name the value with param'),
    });
  });

  it('rejects a headers value outside the drafts', () => {
    expect(issuesOf(() => HttpGuard.resilience({ headers: 'draft-9' }, 'resilience()'))).toEqual([
      {
        path: 'headers',
        message: `must be one of 'draft-6', 'draft-7', 'draft-8', false or { draft, onPass }, got "draft-9"`,
      },
    ]);
  });

  it('rejects a function option that is not a function', () => {
    expect(issuesOf(() => HttpGuard.resilience({ origin: 'ip', onBlock: 1 }, 'resilience()'))).toEqual([
      { path: 'origin', message: 'must be a function, got "ip"' },
      { path: 'onBlock', message: 'must be a function, got 1' },
    ]);
  });

  it('rejects a floodgate option that is not an engine', () => {
    expect(issuesOf(() => HttpGuard.resilience({ floodgate: {} }, 'resilience()'))).toEqual([
      { path: 'floodgate', message: 'must be a Floodgate engine, got an object {}' },
    ]);
  });

  it('rejects a per-route factory rule field at the top level', () => {
    expect(issuesOf(() => HttpGuard.route('rateLimit', { threshold: 'ten' }, 'rateLimit()'))).toEqual([
      { path: 'threshold', message: 'must be a finite number >= 0, got "ten"' },
    ]);
  });

  it('rejects an unknown per-route factory option', () => {
    expect(issuesOf(() => HttpGuard.route('rateLimit', { threshold: 1, limt: 2 }, 'rateLimit()'))).toEqual([
      { path: 'limt', message: expect.stringContaining('unknown field') },
    ]);
  });

  it('declares nothing when the options are invalid', () => {
    const { fg } = engine();
    expect(() =>
      HttpGuard.resilience(
        {
          floodgate: fg,
          routes: { 'GET /a': { rateLimit: { threshold: 1 } }, 'GET /b': { rateLimit: { threshold: -1 } } },
        },
        'r',
      ),
    ).toThrow(RuleValidationError);
    expect(fg.getRules().flow).toEqual([]);
  });
});

describe('HttpGuard routes', () => {
  it('declares each route’s rules on the engine under the route’s resource', () => {
    const { fg } = engine();
    HttpGuard.resilience(
      {
        floodgate: fg,
        routes: { '*': { rateLimit: { threshold: 100 } }, 'get /users/:id': { rateLimit: { threshold: 5 } } },
      },
      'r',
    );
    expect(fg.getRules().flow.map((r) => [r.resource, r.threshold])).toEqual([
      ['* /*', 100],
      ['GET /users/:id', 5],
    ]);
  });

  it('enters every matching route and exits them when the response closes', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      {
        floodgate: fg,
        routes: { '*': { rateLimit: { threshold: 100 } }, 'GET /users/:id': { rateLimit: { threshold: 5 } } },
      },
      'r',
    );
    const res = new FakeResponse();
    expect(guard.guardRoutes(res, {}, 'GET', '/users/1')).toBeUndefined();
    expect(fg.stats('* /*')!.concurrency).toBe(1);
    expect(fg.stats('GET /users/:id')!.concurrency).toBe(1);
    res.finish(200);
    expect(fg.stats('* /*')!.concurrency).toBe(0);
    expect(fg.stats('GET /users/:id')!.concurrency).toBe(0);
  });

  it('returns the block of the first route that refuses', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { '*': { rateLimit: { threshold: 100 } }, 'GET /a': { rateLimit: { threshold: 0 } } } },
      'r',
    );
    expect(guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a')).toMatchObject({
      code: 'ERR_FLOW_BLOCKED',
      resource: 'GET /a',
    });
  });

  it('gives a hotspot rule the wildcard’s capture', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { '/files/*': { hotParam: { param: '*', threshold: 1 } } } },
      'r',
    );
    expect(guard.guardRoutes(new FakeResponse(), {}, 'GET', '/files/a/b')).toBeUndefined();
    expect(guard.guardRoutes(new FakeResponse(), {}, 'GET', '/files/a/c')).toBeUndefined();
    expect(guard.guardRoutes(new FakeResponse(), {}, 'GET', '/files/a/b')).toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
      value: 'a/b',
    });
  });

  it('gives path parameters to hotspot rules loaded at run time on the route', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { 'GET /users/:id': { rateLimit: { threshold: 100 } } } },
      'r',
    );
    fg.loadHotParamRules([{ resource: 'GET /users/:id', paramKey: 'id', threshold: 1 }]);
    expect(guard.guardRoutes(new FakeResponse(), {}, 'GET', '/users/1')).toBeUndefined();
    expect(guard.guardRoutes(new FakeResponse(), {}, 'GET', '/users/1')).toMatchObject({
      code: 'ERR_HOT_PARAM_BLOCKED',
      value: '1',
    });
  });

  it('leaves requests no pattern matches alone', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { 'GET /a': { rateLimit: { threshold: 0 } } } },
      'r',
    );
    const res = new FakeResponse();
    expect(guard.guardRoutes(res, {}, 'GET', '/b')).toBeUndefined();
    expect(res.listenerCount('close')).toBe(0);
  });

  it('passes the origin to the engine', () => {
    const { fg } = engine();
    fg.loadAuthorityRules([{ resource: 'GET /a', strategy: 'deny', origins: ['bad'] }]);
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, origin: (req: Req) => req.origin ?? '', routes: { 'GET /a': {} } },
      'r',
    );
    expect(guard.guardRoutes(new FakeResponse(), { origin: 'good' }, 'GET', '/a')).toBeUndefined();
    expect(guard.guardRoutes(new FakeResponse(), { origin: 'bad' }, 'GET', '/a')).toMatchObject({
      code: 'ERR_AUTHORITY_BLOCKED',
      origin: 'bad',
    });
  });

  it('throws what the origin function throws, having entered nothing', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      {
        floodgate: fg,
        origin: () => {
          throw new Error('no origin');
        },
        routes: { 'GET /a': { rateLimit: { threshold: 5 } } },
      },
      'r',
    );
    expect(() => guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a')).toThrow('no origin');
    expect(fg.stats('GET /a')?.concurrency ?? 0).toBe(0);
  });

  it('rejects an origin function that returns no string', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, origin: (() => 42) as unknown as (req: Req) => string, routes: { 'GET /a': {} } },
      'r',
    );
    expect(() => guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a')).toThrow(
      'origin option must return a string, got number',
    );
  });
});

describe('HttpGuard outcomes', () => {
  it('traces a 5xx response as a failure', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { 'GET /a': { rateLimit: { threshold: 5 } } } },
      'r',
    );
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    res.finish(502);
    expect(fg.stats('GET /a')!.lastSecond.error).toBe(1);
  });

  it('does not trace a 4xx response', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { 'GET /a': { rateLimit: { threshold: 5 } } } },
      'r',
    );
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    res.finish(404);
    expect(fg.stats('GET /a')!.lastSecond.error).toBe(0);
  });

  it('traces a thrown error even when the response is not 5xx', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { 'GET /a': { rateLimit: { threshold: 5 } } } },
      'r',
    );
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    guard.traceError(res, new Error('boom'));
    res.finish(200);
    expect(fg.stats('GET /a')!.lastSecond.error).toBe(1);
  });

  it('does not trace a thrown HTTP client error', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { 'GET /a': { rateLimit: { threshold: 5 } } } },
      'r',
    );
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    guard.traceError(res, Object.assign(new Error('not found'), { status: 404 }));
    res.finish(404);
    expect(fg.stats('GET /a')!.lastSecond.error).toBe(0);
  });

  it('asks isFailure when given', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      {
        floodgate: fg,
        isFailure: (status: number) => status === 429,
        routes: { 'GET /a': { rateLimit: { threshold: 5 } } },
      },
      'r',
    );
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    res.finish(429);
    expect(fg.stats('GET /a')!.lastSecond.error).toBe(1);
  });

  it('exits an aborted request without a failure', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { 'GET /a': { rateLimit: { threshold: 5 } } } },
      'r',
    );
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    res.statusCode = 500;
    res.abort();
    expect(fg.stats('GET /a')!.concurrency).toBe(0);
    expect(fg.stats('GET /a')!.lastSecond.error).toBe(0);
  });

  it('does not count a request answered by a block as failed', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { '*': { rateLimit: { threshold: 5 } }, 'GET /a': { rateLimit: { threshold: 0 } } } },
      'r',
    );
    const res = new FakeResponse();
    const block = guard.guardRoutes(res, {}, 'GET', '/a') as BlockError;
    guard.answer(res, {}, block);
    res.finish(503);
    expect(fg.stats('* /*')!.lastSecond.error).toBe(0);
    expect(fg.stats('* /*')!.concurrency).toBe(0);
  });

  it('measures the response time to the response’s close', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { 'GET /a': { rateLimit: { threshold: 5 } } } },
      'r',
    );
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    await clock.advance(250);
    res.finish(200);
    expect(fg.stats('GET /a')!.lastSecond.totalRtMs).toBe(250);
  });
});

describe('HttpGuard answers', () => {
  it('calls onBlock and gives the route’s fallback before its own', () => {
    const { fg } = engine();
    const seen: string[] = [];
    const routeFallback: Fallback = () => 'route';
    const guardFallback: Fallback = () => 'guard';
    const guard = HttpGuard.resilience<Req, Fallback>(
      {
        floodgate: fg,
        onBlock: (e: BlockError) => seen.push(e.code),
        fallback: guardFallback,
        routes: {
          'GET /a': { rateLimit: { threshold: 0 }, fallback: routeFallback },
          'GET /b': { rateLimit: { threshold: 0 } },
        },
      },
      'r',
    );
    const resA = new FakeResponse();
    expect(guard.answer(resA, {}, guard.guardRoutes(resA, {}, 'GET', '/a') as BlockError)).toBe(routeFallback);
    const resB = new FakeResponse();
    expect(guard.answer(resB, {}, guard.guardRoutes(resB, {}, 'GET', '/b') as BlockError)).toBe(guardFallback);
    expect(seen).toEqual(['ERR_FLOW_BLOCKED', 'ERR_FLOW_BLOCKED']);
  });

  it('shapes the response with its headers option', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, headers: 'draft-7', routes: { 'GET /a': { rateLimit: { threshold: 0 } } } },
      'r',
    );
    const block = guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a') as BlockError;
    expect(guard.respond(block).headers).not.toHaveProperty('RateLimit-Policy', expect.stringContaining('"'));
    expect(guard.respond(block).status).toBe(429);
  });
});

describe('HttpGuard per-route factories', () => {
  it('declares its rules on a route the first time it sees it', () => {
    const { fg } = engine();
    const guard = HttpGuard.route<Req, Fallback>('rateLimit', { floodgate: fg, threshold: 3 }, 'rateLimit()');
    expect(fg.getRules().flow).toEqual([]);
    const policy = guard.routePolicy('GET', '/users/:id');
    expect(guard.routePolicy('GET', '/users/:id')).toBe(policy);
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ resource: 'GET /users/:id', threshold: 3 })]);
  });

  it('refuses a request whose route it cannot tell, when it has no resource', () => {
    const guard = HttpGuard.route<Req, Fallback>('rateLimit', { floodgate: engine().fg, threshold: 3 }, 'rateLimit()');
    expect(() => guard.routePolicy('GET', undefined)).toThrow(
      "rateLimit() cannot tell which route this request is on: use it in a route's handlers, or give it a resource",
    );
  });

  it('tells whether it has declared its rules on a route yet', () => {
    const guard = HttpGuard.route<Req, Fallback>('rateLimit', { floodgate: engine().fg, threshold: 3 }, 'rateLimit()');
    expect(guard.isNewRoute('GET', '/a')).toBe(true);
    guard.routePolicy('GET', '/a');
    expect(guard.isNewRoute('GET', '/a')).toBe(false);
    expect(guard.isNewRoute('POST', '/a')).toBe(true);
  });

  it('declares its rules at once under a resource it is given', () => {
    const { fg } = engine();
    HttpGuard.route<Req, Fallback>('rateLimit', { floodgate: fg, threshold: 3, resource: 'users' }, 'rateLimit()');
    expect(fg.getRules().flow).toEqual([expect.objectContaining({ resource: 'users', threshold: 3 })]);
  });

  it('enters a route once per request whichever middleware comes first', () => {
    const { fg } = engine();
    const outer = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { 'GET /a': { rateLimit: { threshold: 5 } } } },
      'r',
    );
    const inner = HttpGuard.route<Req, Fallback>('rateLimit', { floodgate: fg, threshold: 5 }, 'rateLimit()');
    const res = new FakeResponse();
    outer.guardRoutes(res, {}, 'GET', '/a');
    expect(inner.guardRoute(res, {}, inner.routePolicy('GET', '/a'), {})).toBeUndefined();
    expect(fg.stats('GET /a')!.concurrency).toBe(1);
    res.finish(200);
    expect(fg.stats('GET /a')!.lastSecond.pass).toBe(1);
  });

  it('refuses a second fallback for one route', () => {
    const { fg } = engine();
    HttpGuard.resilience(
      { floodgate: fg, routes: { 'GET /a': { rateLimit: { threshold: 5 }, fallback: () => 'a' } } },
      'r',
    );
    const inner = HttpGuard.route<Req, Fallback>(
      'rateLimit',
      { floodgate: fg, threshold: 5, fallback: () => 'b' },
      'rateLimit()',
    );
    expect(() => inner.routePolicy('GET', '/a')).toThrow('route "GET /a" already has a fallback');
  });
});

describe('HttpGuard queueing', () => {
  it('queues a throttled request through the clock and admits it when its turn comes', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      {
        floodgate: fg,
        routes: { 'GET /a': { rateLimit: { threshold: 1, behavior: 'throttle', maxQueueingTimeMs: 5000 } } },
      },
      'r',
    );
    expect(await guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a')).toBeUndefined();
    const second = guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a');
    expect(second).toBeInstanceOf(Promise);
    await clock.advance(1000);
    await expect(second).resolves.toBeUndefined();
  });

  it('answers at once when the queue need not hold the request, and listens only to a request that waits', async () => {
    const { fg } = engine();
    const rateLimit = { metric: 'concurrency', threshold: 1, maxQueueLength: 1, maxQueueingTimeMs: 5000 } as const;
    const guard = HttpGuard.resilience<Req, Fallback>({ floodgate: fg, routes: { 'GET /a': { rateLimit } } }, 'r');
    const admitted = new FakeResponse();
    expect(guard.guardRoutes(admitted, {}, 'GET', '/a')).toBeUndefined();
    const waiting = new FakeResponse();
    const queued = guard.guardRoutes(waiting, {}, 'GET', '/a');
    expect(queued).toBeInstanceOf(Promise);
    expect(waiting.listenerCount('close')).toBe(1);
    const refused = new FakeResponse();
    expect(guard.guardRoutes(refused, {}, 'GET', '/a')).toMatchObject({ resource: 'GET /a' });
    expect(refused.listenerCount('close')).toBe(0);
    admitted.finish(200);
    await expect(queued).resolves.toBeUndefined();
    waiting.finish(200);
    expect(fg.stats('GET /a')).toMatchObject({ concurrency: 0 });
  });

  it('enters the routes after a queue once the queue admits the request', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      {
        floodgate: fg,
        routes: {
          'GET /a': { rateLimit: { threshold: 1, behavior: 'throttle', maxQueueingTimeMs: 5000 } },
          '*': { rateLimit: { threshold: 10 } },
        },
      },
      'r',
    );
    expect(guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a')).toBeUndefined();
    const second = guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a');
    expect(second).toBeInstanceOf(Promise);
    expect(fg.totals('* /*')).toMatchObject({ pass: 1 });
    await clock.advance(1000);
    await expect(second).resolves.toBeUndefined();
    expect(fg.totals('* /*')).toMatchObject({ pass: 2 });
  });

  it('leaves the queue when the client leaves, giving its slot back', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      {
        floodgate: fg,
        routes: { 'GET /a': { rateLimit: { threshold: 1, behavior: 'throttle', maxQueueingTimeMs: 5000 } } },
      },
      'r',
    );
    await guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a');
    const leaving = new FakeResponse();
    const second = guard.guardRoutes(leaving, {}, 'GET', '/a');
    expect(clock.pendingSleeps).toBe(1);
    leaving.abort();
    await expect(second).resolves.toBe('aborted');
    expect(clock.pendingSleeps).toBe(0);
    const third = guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a');
    await clock.advance(1000);
    await expect(third).resolves.toBeUndefined();
  });

  it('switches to queueing when rules loaded at run time throttle the route', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { 'GET /a': { rateLimit: { threshold: 100 } } } },
      'r',
    );
    fg.loadFlowRules([{ resource: 'GET /a', threshold: 1, behavior: 'throttle', maxQueueingTimeMs: 5000 }]);
    await guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a');
    const second = guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a');
    await clock.advance(1000);
    await expect(second).resolves.toBeUndefined();
  });
});

describe('HttpGuard refusals', () => {
  it('gives back what earlier routes admitted the request to when a later one refuses', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      {
        floodgate: fg,
        routes: {
          '*': { rateLimit: [{ threshold: 10 }, { metric: 'concurrency', threshold: 10 }] },
          'GET /a': { rateLimit: { threshold: 0 } },
        },
      },
      'r',
    );
    expect(guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a')).toMatchObject({ resource: 'GET /a' });
    expect(fg.stats('* /*')!.lastSecond.pass).toBe(0);
    expect(fg.stats('* /*')!.concurrency).toBe(0);
  });

  it('gives back the resilience() entries when a per-route guard refuses the request', () => {
    const { fg } = engine();
    const outer = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { '*': { rateLimit: { threshold: 10 } } } },
      'r',
    );
    const inner = HttpGuard.route<Req, Fallback>(
      'hotParam',
      { floodgate: fg, param: (req: Req) => req.user, threshold: 1 },
      'hotParam()',
    );
    const policy = inner.routePolicy('GET', '/a');
    for (let i = 0; i < 5; i++) {
      const res = new FakeResponse();
      outer.guardRoutes(res, {}, 'GET', '/a');
      inner.guardRoute(res, { user: 'mallory' }, policy, {});
    }
    expect(fg.stats('* /*')!.lastSecond.pass).toBe(1);
  });

  it('gives back a queued request’s earlier entries when its client leaves the queue', async () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      {
        floodgate: fg,
        routes: {
          '*': { rateLimit: { threshold: 10 } },
          'GET /a': { rateLimit: { threshold: 1, behavior: 'throttle', maxQueueingTimeMs: 5000 } },
        },
      },
      'r',
    );
    const first = new FakeResponse();
    await guard.guardRoutes(first, {}, 'GET', '/a');
    first.finish(200);
    const leaving = new FakeResponse();
    const queued = guard.guardRoutes(leaving, {}, 'GET', '/a');
    leaving.abort();
    await expect(queued).resolves.toBe('aborted');
    expect(fg.stats('* /*')!).toMatchObject({ concurrency: 0, lastSecond: { pass: 1 } });
  });
});

describe('HttpGuard matching', () => {
  it('matches HEAD requests as GET, against the GET route’s budget', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { 'GET /export': { rateLimit: { threshold: 1 } } } },
      'r',
    );
    expect(guard.guardRoutes(new FakeResponse(), {}, 'HEAD', '/export')).toBeUndefined();
    expect(guard.guardRoutes(new FakeResponse(), {}, 'GET', '/export')).toMatchObject({ resource: 'GET /export' });
  });

  it('matches HEAD requests by a HEAD pattern when one matches, and as GET elsewhere', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      {
        floodgate: fg,
        routes: { 'GET /*': { rateLimit: { threshold: 0 } }, 'HEAD /health': { rateLimit: { threshold: 5 } } },
      },
      'r',
    );
    expect(guard.guardRoutes(new FakeResponse(), {}, 'HEAD', '/health')).toBeUndefined();
    expect(guard.guardRoutes(new FakeResponse(), {}, 'HEAD', '/other')).toMatchObject({ resource: 'GET /*' });
  });

  it('matches letter case as the guard’s matching says, or as the request says', () => {
    const { fg } = engine();
    const routes = { 'POST /login': { rateLimit: { threshold: 0 } } };
    const loose = HttpGuard.resilience<Req, Fallback>({ floodgate: fg, routes }, 'r');
    const strict = HttpGuard.resilience<Req, Fallback>({ floodgate: fg, routes }, 'r', { caseSensitive: true });
    expect(loose.guardRoutes(new FakeResponse(), {}, 'POST', '/LOGIN')).toMatchObject({ resource: 'POST /login' });
    expect(strict.guardRoutes(new FakeResponse(), {}, 'POST', '/LOGIN')).toBeUndefined();
    expect(loose.guardRoutes(new FakeResponse(), {}, 'POST', '/LOGIN', true)).toBeUndefined();
  });
});

describe('HttpGuard params a route does not have', () => {
  it('refuses a per-route hotspot param on a route without it, on every request, declaring nothing', () => {
    const { fg } = engine();
    const guard = HttpGuard.route<Req, Fallback>(
      'hotParam',
      { floodgate: fg, param: 'userId', threshold: 1 },
      'hotParam()',
    );
    for (let i = 0; i < 2; i++) {
      expect(issuesOf(() => guard.routePolicy('GET', '/users/:id', { id: '1' }))).toEqual([
        {
          path: 'param',
          message: `"userId" is not a parameter of the route (it has: 'id'): the rule would limit nothing`,
        },
      ]);
    }
    expect(() => guard.routePolicy('GET', '/users/:id')).toThrow(
      'Invalid hotParam() options on GET /users/:id: param:',
    );
    expect(fg.getRules().hotParams).toEqual([]);
  });

  it('accepts a param of the template or of the request (a router’s mount parameters)', () => {
    const { fg } = engine();
    const byTemplate = HttpGuard.route<Req, Fallback>(
      'hotParam',
      { floodgate: fg, param: 'path', threshold: 1 },
      'hotParam()',
    );
    expect(() => byTemplate.routePolicy('GET', '/files/*path')).not.toThrow();
    const byRequest = HttpGuard.route<Req, Fallback>(
      'hotParam',
      { floodgate: fg, param: 'org', threshold: 1 },
      'hotParam()',
    );
    expect(() => byRequest.routePolicy('GET', '/acme/users/:id', { org: 'acme', id: '1' })).not.toThrow();
  });

  it('refuses a route config whose hotspot param the route does not have', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>({ floodgate: fg }, 'plugin');
    expect(
      issuesOf(() =>
        guard.declareRoute('GET /users/:id', { hotParam: { param: 'uid', threshold: 1 } }, 'config.floodgate', ['id']),
      ),
    ).toEqual([
      {
        path: 'config.floodgate.hotParam.param',
        message: `"uid" is not a parameter of the route (it has: 'id'): the rule would limit nothing`,
      },
    ]);
  });
});

describe('HttpGuard timeouts', () => {
  it('answers 503 when the route’s timeout passes, exiting its entries as failures', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { '*': { rateLimit: { threshold: 10 } }, 'GET /a': { timeoutMs: 500 } } },
      'r',
    );
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    await clock.advance(499);
    expect(res.headersSent).toBe(false);
    await clock.advance(1);
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body!)).toMatchObject({ code: 'ERR_TIMEOUT', resource: 'GET /a' });
    expect(fg.stats('* /*')!).toMatchObject({ concurrency: 1, lastSecond: { error: 1, totalRtMs: 500 } });
    expect(fg.totals('GET /a')).toMatchObject({ error: 1, timeout: 1 });
    res.emit('close');
    expect(fg.stats('* /*')!.concurrency).toBe(0);
    res.finish(200);
    expect(fg.totals('GET /a')).toMatchObject({ success: 1, error: 1 });
  });

  it('answers 408 to a client still sending its request at the timeout, recording no outcome (#24)', async () => {
    const { fg, clock } = engine();
    fg.loadCircuitBreakerRules([
      { resource: 'GET /a', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 1000 },
    ]);
    const guard = HttpGuard.resilience<Req, Fallback>({ floodgate: fg, routes: { 'GET /a': { timeoutMs: 500 } } }, 'r');
    const res = new FakeResponse();
    (res.req as { complete?: boolean }).complete = false;
    guard.guardRoutes(res, {}, 'GET', '/a');
    await clock.advance(500);
    expect(res.statusCode).toBe(408);
    expect(res.headers).toMatchObject({
      connection: 'close',
      'content-type': 'application/problem+json; charset=utf-8',
    });
    expect(JSON.parse(res.body!)).toEqual({
      type: 'about:blank',
      title: 'Request Timeout',
      status: 408,
      detail: 'The request was not received completely within the time allowed to this resource.',
      code: 'ERR_TIMEOUT',
      resource: 'GET /a',
    });
    res.emit('close');
    expect(fg.totals('GET /a')).toMatchObject({ pass: 1, success: 0, error: 0, timeout: 0 });
    expect(fg.stats('GET /a')!.concurrency).toBe(0);
    expect(fg.circuitState('GET /a')[0]!.state).toBe('closed');
  });

  it('hands a half-open probe on when its client was still sending at the timeout (#24)', async () => {
    const { fg, clock } = engine();
    fg.loadCircuitBreakerRules([
      { resource: 'GET /a', strategy: 'errorCount', threshold: 0, minRequestAmount: 1, retryTimeoutMs: 1000 },
    ]);
    const guard = HttpGuard.resilience<Req, Fallback>({ floodgate: fg, routes: { 'GET /a': { timeoutMs: 500 } } }, 'r');
    const failing = new FakeResponse();
    guard.guardRoutes(failing, {}, 'GET', '/a');
    failing.finish(500);
    await clock.advance(1000);
    const slow = new FakeResponse();
    (slow.req as { complete?: boolean }).complete = false;
    expect(guard.guardRoutes(slow, {}, 'GET', '/a')).toBeUndefined();
    await clock.advance(500);
    expect(slow.statusCode).toBe(408);
    expect(fg.circuitState('GET /a')[0]!.state).toBe('halfOpen');
    const next = new FakeResponse();
    expect(guard.guardRoutes(next, {}, 'GET', '/a')).toBeUndefined();
    next.finish(200);
    expect(fg.circuitState('GET /a')[0]!.state).toBe('closed');
  });

  it('records the outcome when the handler ends the response, however late the client reads it (#24)', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>({ floodgate: fg, routes: { 'GET /a': { timeoutMs: 500 } } }, 'r');
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    await clock.advance(100);
    res.writeHead(200, {});
    res.end('a large body the client reads slowly');
    expect(clock.pendingSleeps).toBe(0);
    await clock.advance(10_000);
    expect(fg.stats('GET /a')!.concurrency).toBe(1);
    expect(fg.totals('GET /a')).toMatchObject({ success: 1, rtSumMs: 100 });
    res.emit('close');
    expect(fg.totals('GET /a')).toMatchObject({ success: 1, error: 0, timeout: 0, rtSumMs: 100 });
    expect(fg.stats('GET /a')!.concurrency).toBe(0);
  });

  it('records the outcome of a pipelined response when its handler ends it, before it is on the connection (#24)', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>({ floodgate: fg, routes: { 'GET /a': { timeoutMs: 500 } } }, 'r');
    const socket = new FakeSocket();
    const waiting = new FakeResponse(socket, { waiting: true });
    guard.guardRoutes(waiting, {}, 'GET', '/a');
    await clock.advance(100);
    waiting.writeHead(200, {});
    waiting.end('ok');
    await clock.advance(1000);
    socket.close();
    expect(fg.totals('GET /a')).toMatchObject({ success: 1, error: 0, timeout: 0, rtSumMs: 100 });
  });

  it('keeps the slots of a request its timeout answered until its handler settles (#24)', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { 'GET /a': { rateLimit: { metric: 'concurrency', threshold: 1 }, timeoutMs: 500 } } },
      'r',
    );
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    expect(guard.handlerStarts(res)).toBe(true);
    expect(guard.handlerStarts(res)).toBe(true);
    await clock.advance(500);
    res.emit('close');
    expect(fg.stats('GET /a')!.concurrency).toBe(1);
    expect(guard.guardRoutes(new FakeResponse(), {}, 'GET', '/a')).toMatchObject({ code: 'ERR_FLOW_BLOCKED' });
    guard.handlerSettled(res);
    expect(fg.stats('GET /a')!.concurrency).toBe(1);
    guard.handlerSettled(res);
    expect(fg.stats('GET /a')!.concurrency).toBe(0);
    expect(fg.totals('GET /a')).toMatchObject({ success: 1, error: 1, timeout: 1 });
  });

  it('tells nothing to watch for a request without a timeout, or an unguarded one', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>({ floodgate: fg, routes: { 'GET /a': {} } }, 'r');
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    expect(guard.handlerStarts(res)).toBe(false);
    expect(guard.handlerStarts(new FakeResponse())).toBe(false);
  });

  it('discards what the handler sends after the timeout, its end() releasing the slots (#24)', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>({ floodgate: fg, routes: { 'GET /a': { timeoutMs: 500 } } }, 'r');
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    guard.handlerStarts(res);
    await clock.advance(500);
    const answer = res.body;
    res.emit('close');
    expect(res.headersSent).toBe(false);
    res.setHeader('X-Late', 'yes');
    res.writeHead(200, { 'X-Late': 'yes' });
    expect(fg.stats('GET /a')!.concurrency).toBe(1);
    res.end('late');
    expect(res.body).toBe(answer);
    expect(res.headers['x-late']).toBeUndefined();
    expect(fg.stats('GET /a')!.concurrency).toBe(0);
  });

  it('takes an error handed to Floodgate after the timeout as the handler settling (#24)', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>({ floodgate: fg, routes: { 'GET /a': { timeoutMs: 500 } } }, 'r');
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    guard.handlerStarts(res);
    await clock.advance(500);
    res.emit('close');
    expect(fg.stats('GET /a')!.concurrency).toBe(1);
    guard.traceError(res, new Error('late failure'));
    expect(fg.stats('GET /a')!.concurrency).toBe(0);
    expect(fg.totals('GET /a')).toMatchObject({ error: 1, timeout: 1 });
  });

  it('stops the timer when the request ends first', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>({ floodgate: fg, routes: { 'GET /a': { timeoutMs: 500 } } }, 'r');
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    expect(clock.pendingSleeps).toBe(1);
    res.finish(200);
    expect(clock.pendingSleeps).toBe(0);
  });

  it('keeps the shortest timeout of a request’s routes', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { '*': { timeoutMs: 1000 }, 'GET /a': { timeoutMs: 300 }, '/a': { timeoutMs: 2000 } } },
      'r',
    );
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    await clock.advance(300);
    expect(JSON.parse(res.body!)).toMatchObject({ code: 'ERR_TIMEOUT', resource: 'GET /a' });
  });

  it('does not answer a response already begun', async () => {
    const { fg, clock } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>({ floodgate: fg, routes: { 'GET /a': { timeoutMs: 500 } } }, 'r');
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    res.headersSent = true;
    await clock.advance(500);
    expect(res.body).toBeUndefined();
    expect(fg.totals('GET /a')).toMatchObject({ error: 1, timeout: 1 });
  });

  it('refuses two timeouts for one route from two middlewares', () => {
    const { fg } = engine();
    HttpGuard.resilience({ floodgate: fg, routes: { 'GET /a': { timeoutMs: 500 } } }, 'r');
    const inner = HttpGuard.route<Req, Fallback>(
      'rateLimit',
      { floodgate: fg, threshold: 5, timeoutMs: 800 },
      'rateLimit()',
    );
    expect(() => inner.routePolicy('GET', '/a')).toThrow(
      'route "GET /a" already has timeoutMs 500 from another Floodgate middleware',
    );
  });

  it.each([0, -1, 2 ** 31, 'soon'])('refuses timeoutMs %j, naming it', (timeoutMs) => {
    expect(issuesOf(() => HttpGuard.resilience({ routes: { 'GET /a': { timeoutMs } } }, 'r'))).toEqual([
      {
        path: "routes['GET /a'].timeoutMs",
        message: expect.stringContaining('must be a finite number > 0 and <= 2147483647'),
      },
    ]);
  });
});

describe('HttpGuard RateLimit headers on passing responses', () => {
  it('sets the tightest quota left of the resources entered', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      {
        floodgate: fg,
        headers: { onPass: true },
        routes: {
          '*': { rateLimit: { threshold: 3 } },
          'GET /a': { rateLimit: [{ threshold: 10 }, { metric: 'concurrency', threshold: 1 }] },
        },
      },
      'r',
    );
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    expect(res.headers).toEqual({ 'ratelimit-policy': '"flow";q=3;w=1', ratelimit: '"flow";r=2;t=1' });
  });

  it('writes the draft asked for, and follows rules loaded at run time', () => {
    const { fg } = engine();
    const guard = HttpGuard.resilience<Req, Fallback>(
      {
        floodgate: fg,
        headers: { draft: 'draft-6', onPass: true },
        routes: { 'GET /a': { rateLimit: { threshold: 3 } } },
      },
      'r',
    );
    fg.loadFlowRules([{ resource: 'GET /a', threshold: 7 }]);
    const res = new FakeResponse();
    guard.guardRoutes(res, {}, 'GET', '/a');
    expect(res.headers).toEqual({
      'ratelimit-policy': '7;w=1',
      'ratelimit-limit': '7',
      'ratelimit-remaining': '6',
      'ratelimit-reset': '1',
    });
  });

  it('sets none without a QPS rule, or when not asked', () => {
    const { fg } = engine();
    const quiet = HttpGuard.resilience<Req, Fallback>(
      { floodgate: fg, routes: { 'GET /a': { rateLimit: { threshold: 3 } } } },
      'r',
    );
    const concurrencyOnly = HttpGuard.resilience<Req, Fallback>(
      {
        floodgate: fg,
        headers: { onPass: true },
        routes: { 'GET /b': { rateLimit: { metric: 'concurrency', threshold: 3 } } },
      },
      'r',
    );
    const a = new FakeResponse();
    const b = new FakeResponse();
    quiet.guardRoutes(a, {}, 'GET', '/a');
    concurrencyOnly.guardRoutes(b, {}, 'GET', '/b');
    expect(a.headers).toEqual({});
    expect(b.headers).toEqual({});
  });

  it('refuses onPass without headers, and unknown fields of the headers option', () => {
    expect(issuesOf(() => HttpGuard.resilience({ headers: { draft: false, onPass: true, pass: 1 } }, 'r'))).toEqual([
      { path: 'headers.pass', message: expect.stringContaining('unknown field (allowed: draft, onPass)') },
      { path: 'headers.onPass', message: 'asks for headers on passing responses, but draft is false (no headers)' },
    ]);
  });
});
