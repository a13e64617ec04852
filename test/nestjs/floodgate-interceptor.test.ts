import 'reflect-metadata';
import { request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import {
  Controller,
  Get,
  Head,
  Injectable,
  NotFoundException,
  Param,
  StreamableFile,
  UseGuards,
  UseInterceptors,
  type CanActivate,
  type ExecutionContext,
  type Type,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import request from 'supertest';
import { Floodgate, type BlockError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { blockResponse } from '@floodgate/core/http';
import {
  CircuitBreaker,
  FloodgateInterceptor,
  FloodgateModule,
  HotParam,
  RateLimit,
  SkipFloodgate,
  type FloodgateModuleOptions,
} from '@floodgate/nestjs';
import { Deferred, eventually, PLATFORMS, portOf, startNest, type NestHarness, type Platform } from './nest-harness';

/** What the test controllers hold open or count, set per test. */
const world = {
  hold: undefined as Deferred | undefined,
  calls: 0,
  stream: undefined as PassThrough | undefined,
  guardGate: undefined as Deferred | undefined,
  /** The Node response of the last request that reached GateGuard. */
  gated: undefined as { readonly closed: boolean } | undefined,
};

@Controller('items')
class ItemsController {
  @Get('limited')
  @RateLimit({ threshold: 2 })
  limited() {
    world.calls++;
    return { ok: true };
  }

  @Get('flaky')
  @CircuitBreaker({ strategy: 'errorCount', threshold: 1, minRequestAmount: 1, retryTimeoutMs: 5000 })
  flaky() {
    world.calls++;
    if (world.hold === undefined) throw new Error('upstream down');
    return { ok: true };
  }

  @Get('missing/:id')
  @CircuitBreaker({ strategy: 'errorCount', threshold: 1, minRequestAmount: 1, retryTimeoutMs: 5000 })
  missing(@Param('id') id: string) {
    throw new NotFoundException(`no item ${id}`);
  }

  @Get('slow')
  @RateLimit({ metric: 'concurrency', threshold: 5 })
  async slow() {
    world.calls++;
    await world.hold!.promise;
    return { late: true };
  }

  @Get('download')
  @RateLimit({ metric: 'concurrency', threshold: 1 })
  download() {
    world.stream = new PassThrough();
    return new StreamableFile(world.stream);
  }

  @Get('paced')
  @RateLimit({ threshold: 1, behavior: 'throttle', maxQueueingTimeMs: 5000 })
  paced() {
    world.calls++;
    return { paced: true };
  }

  @Get('plain')
  plain() {
    world.calls++;
    return { plain: true };
  }

  @Get('unguarded')
  @SkipFloodgate()
  unguarded() {
    return { unguarded: true };
  }
}

/** Holds requests in the guard stage until the test lets them on. */
@Injectable()
class GateGuard implements CanActivate {
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const response = context.switchToHttp().getResponse<{ raw?: { closed: boolean }; closed: boolean }>();
    world.gated = response.raw ?? response;
    await world.guardGate?.promise;
    return true;
  }
}

@Controller('gated')
@UseGuards(GateGuard)
class GatedController {
  @Get()
  @RateLimit({ metric: 'concurrency', threshold: 5 })
  gated() {
    world.calls++;
    return { gated: true };
  }
}

@Controller('own')
@UseInterceptors(FloodgateInterceptor)
@RateLimit({ threshold: 1 })
class OwnInterceptorController {
  @Get()
  own() {
    return { own: true };
  }
}

@Controller('other')
class OtherController {
  @Get()
  other() {
    return { other: true };
  }
}

/** Sets `req.user` from `x-user` (an app's authentication, as Passport's AuthGuard would). */
@Injectable()
class HeaderAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined>; user?: unknown }>();
    const user = req.headers['x-user'];
    if (user !== undefined) req.user = { id: user, org: { id: `org-of-${user}` } };
    return true;
  }
}

@Controller('by')
class HotController {
  @Get('param/:id')
  @HotParam({ param: 'id', threshold: 1 })
  byParam() {
    return { ok: true };
  }

  @Get('query')
  @HotParam({ query: 'key', threshold: 1 })
  byQuery() {
    return { ok: true };
  }

  @Get('header')
  @HotParam({ header: 'X-Api-Key', threshold: 1 })
  byHeader() {
    return { ok: true };
  }

  @Get('user')
  @HotParam({ user: 'id', threshold: 1 })
  byUser() {
    return { ok: true };
  }

  @Get('org')
  @HotParam({ user: 'org.id', threshold: 1 })
  byOrg() {
    return { ok: true };
  }

  @Get('ip')
  @HotParam({ ip: true, threshold: 1 })
  byIp() {
    return { ok: true };
  }

  @Get('wrong-user')
  @HotParam({ user: 'userId', threshold: 1 })
  byWrongUser() {
    return { ok: true };
  }

  @Get('get-and-head')
  @HotParam({ query: 'key', threshold: 1 })
  getAndHead() {
    return { ok: true };
  }
}

@Controller('head')
class HeadController {
  @Head()
  @RateLimit({ threshold: 1 })
  head() {
    return undefined;
  }
}

/** Opens a raw HTTP request and resolves with its response once the head arrives. */
function openRequest(server: Server, path: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: portOf(server), path, agent: false }, resolve);
    req.on('error', reject);
    req.end();
  });
}

describe.each(PLATFORMS)('FloodgateInterceptor on %s', (platform: Platform) => {
  let clock: ManualClock;
  let fg: Floodgate;
  let harness: NestHarness | undefined;

  beforeEach(() => {
    clock = new ManualClock(10_000);
    fg = new Floodgate({ clock });
    world.hold = undefined;
    world.calls = 0;
    world.stream = undefined;
    world.guardGate = undefined;
    world.gated = undefined;
  });

  afterEach(async () => {
    world.hold?.resolve();
    world.guardGate?.resolve();
    world.stream?.end();
    await harness?.close();
    harness = undefined;
  });

  async function start(
    options: Partial<FloodgateModuleOptions> = {},
    extra: { controllers?: Type[]; providers?: unknown[]; listen?: boolean; trustProxy?: boolean } = {},
  ): Promise<Server> {
    harness = await startNest(
      platform,
      {
        imports: [FloodgateModule.forRoot({ floodgate: fg, ...options })],
        controllers: (extra.controllers ?? [ItemsController]) as never[],
        providers: (extra.providers ?? []) as never[],
      },
      { trustProxy: extra.trustProxy },
    );
    if (extra.listen === true) await harness.app.listen(0, '127.0.0.1');
    return harness.server;
  }

  const concurrency = (resource: string): number => fg.stats(resource)?.concurrency ?? 0;

  it('lets requests within the limit through to the handler', async () => {
    const server = await start();
    await request(server).get('/items/limited').expect(200, { ok: true });
    expect(fg.stats('ItemsController.limited')!.lastSecond.pass).toBe(1);
    expect(concurrency('ItemsController.limited')).toBe(0);
  });

  it('answers 429 past a @RateLimit with Retry-After, RateLimit headers and a problem+json body, without calling the handler', async () => {
    const server = await start();
    await request(server).get('/items/limited').expect(200);
    await request(server).get('/items/limited').expect(200);
    const blocked = await request(server).get('/items/limited').expect(429);
    expect(world.calls).toBe(2);
    expect(blocked.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(blocked.headers['retry-after']).toBe('1');
    expect(blocked.headers['ratelimit-policy']).toBe('"flow";q=2;w=1');
    expect(blocked.headers['ratelimit']).toBe('"flow";r=0;t=1');
    expect(JSON.parse(blocked.text)).toEqual({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Request cannot be satisfied as assigned quota has been exceeded',
      status: 429,
      detail: 'The request rate limit of this resource was exceeded.',
      code: 'ERR_FLOW_BLOCKED',
      resource: 'ItemsController.limited',
      'violated-policies': ['flow'],
    });
  });

  it("answers a block with exactly core's blockResponse(), as the Express, Koa and Fastify adapters do", async () => {
    const errors: BlockError[] = [];
    fg.on('block', ({ error }) => errors.push(error));
    const server = await start({ headers: 'draft-7' });
    await request(server).get('/items/limited');
    await request(server).get('/items/limited');
    const blocked = await request(server).get('/items/limited').expect(429);
    const expected = blockResponse(errors[0]!, { headers: 'draft-7' });
    expect(blocked.status).toBe(expected.status);
    for (const [name, value] of Object.entries(expected.headers))
      expect(blocked.headers[name.toLowerCase()]).toBe(value);
    expect(blocked.text).toBe(expected.json);
  });

  it("answers 503 with Retry-After while the handler's circuit breaker is open, and closes it after a good probe", async () => {
    const server = await start();
    await request(server).get('/items/flaky').expect(500);
    await request(server).get('/items/flaky').expect(500);
    expect(fg.circuitState('ItemsController.flaky')[0]!.state).toBe('open');
    const open = await request(server).get('/items/flaky').expect(503);
    expect(world.calls).toBe(2);
    expect(open.headers['retry-after']).toBe('5');
    expect(JSON.parse(open.text)).toMatchObject({
      status: 503,
      code: 'ERR_CIRCUIT_OPEN',
      resource: 'ItemsController.flaky',
    });
    await clock.advance(5000);
    world.hold = new Deferred();
    await request(server).get('/items/flaky').expect(200, { ok: true });
    expect(fg.circuitState('ItemsController.flaky')[0]!.state).toBe('closed');
  });

  it('counts an HTTP 4xx exception from the handler as no failure for the circuit breaker', async () => {
    const server = await start();
    for (let i = 0; i < 3; i++) await request(server).get(`/items/missing/${i}`).expect(404);
    expect(fg.circuitState('ItemsController.missing')[0]!.state).toBe('closed');
    expect(fg.stats('ItemsController.missing')!.lastSecond.error).toBe(0);
  });

  it('enters every handler as ControllerClass.methodName, with rules or not, so loaded rules can limit it', async () => {
    const server = await start();
    await request(server).get('/items/plain').expect(200);
    expect(fg.stats('ItemsController.plain')!.lastSecond.pass).toBe(1);
    fg.loadFlowRules([{ resource: 'ItemsController.plain', threshold: 0 }]);
    await request(server).get('/items/plain').expect(429);
  });

  it('leaves handlers under @SkipFloodgate() unguarded', async () => {
    const server = await start();
    await request(server).get('/items/unguarded').expect(200, { unguarded: true });
    expect(fg.stats('ItemsController.unguarded')).toBeUndefined();
  });

  it('leaves requests for which skipIf returns true unguarded', async () => {
    const server = await start({
      skipIf: (context) =>
        context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-internal'] === 'yes',
    });
    for (let i = 0; i < 5; i++) await request(server).get('/items/limited').set('x-internal', 'yes').expect(200);
    await request(server).get('/items/limited').expect(200);
    await request(server).get('/items/limited').expect(200);
    await request(server).get('/items/limited').expect(429);
  });

  it('holds a concurrency slot until a streamed response has ended', async () => {
    const server = await start({}, { listen: true });
    const responded = openRequest(server, '/items/download');
    await eventually(() => world.stream !== undefined);
    const stream = world.stream!;
    stream.write('part one, ');
    const response = await responded;
    expect(response.statusCode).toBe(200);
    const body: Buffer[] = [];
    response.on('data', (chunk: Buffer) => body.push(chunk));
    expect(concurrency('ItemsController.download')).toBe(1);
    await request(server).get('/items/download').expect(429);
    expect(concurrency('ItemsController.download')).toBe(1);
    stream.end('part two');
    await new Promise((resolve) => response.on('end', resolve));
    expect(Buffer.concat(body).toString()).toBe('part one, part two');
    await eventually(() => concurrency('ItemsController.download') === 0);
  });

  it('gives every concurrency slot back when raw clients disconnect mid-request', async () => {
    world.hold = new Deferred();
    const server = await start({}, { listen: true });
    const sockets = [0, 1, 2].map(() => connect(portOf(server), '127.0.0.1'));
    for (const socket of sockets) socket.write('GET /items/slow HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await eventually(() => world.calls === 3);
    expect(concurrency('ItemsController.slow')).toBe(3);
    for (const socket of sockets) socket.destroy();
    await eventually(() => concurrency('ItemsController.slow') === 0);
    world.hold.resolve();
    await request(server).get('/items/slow').expect(200, { late: true });
    expect(concurrency('ItemsController.slow')).toBe(0);
  });

  it('queues a request under a throttle rule, and takes a client that leaves the queue out of it', async () => {
    const server = await start({}, { listen: true });
    await request(server).get('/items/paced').expect(200, { paced: true });
    const queued = request(server)
      .get('/items/paced')
      .then((res) => res.status);
    await eventually(() => clock.pendingSleeps === 1);
    const leaver = connect(portOf(server), '127.0.0.1');
    leaver.write('GET /items/paced HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await eventually(() => clock.pendingSleeps === 2);
    leaver.destroy();
    await eventually(() => clock.pendingSleeps === 1);
    await clock.advance(1000);
    expect(await queued).toBe(200);
    expect(world.calls).toBe(2);
    // The slot the leaver had reserved was given back: the next request waits one interval, not two.
    const next = request(server)
      .get('/items/paced')
      .then((res) => res.status);
    await eventually(() => clock.pendingSleeps === 1);
    await clock.advance(1000);
    expect(await next).toBe(200);
    expect(concurrency('ItemsController.paced')).toBe(0);
  });

  it('does not enter, nor call the handler for, a request whose client left while the guards ran', async () => {
    world.guardGate = new Deferred();
    const server = await start({}, { controllers: [GatedController], listen: true });
    const socket = connect(portOf(server), '127.0.0.1');
    socket.write('GET /gated HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await eventually(() => world.gated !== undefined);
    socket.destroy();
    await eventually(() => world.gated!.closed);
    world.guardGate.resolve();
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(world.calls).toBe(0);
    expect(concurrency('GatedController.gated')).toBe(0);
    expect(fg.stats('GatedController.gated')?.lastSecond.pass ?? 0).toBe(0);
    await request(server).get('/gated').expect(200, { gated: true });
  });

  it('enters a resource once per request when the interceptor is both global and on the controller', async () => {
    const server = await start({}, { controllers: [OwnInterceptorController] });
    await request(server).get('/own').expect(200);
    expect(fg.stats('OwnInterceptorController.own')!.lastSecond.pass).toBe(1);
    await request(server).get('/own').expect(429);
  });

  it('with global: false, guards only the controllers under @UseInterceptors(FloodgateInterceptor)', async () => {
    const server = await start({ global: false }, { controllers: [OwnInterceptorController, OtherController] });
    await request(server).get('/own').expect(200);
    await request(server).get('/own').expect(429);
    await request(server).get('/other').expect(200);
    expect(fg.stats('OtherController.other')).toBeUndefined();
  });

  describe('hotspot values', () => {
    const hot = (listen = false): Promise<Server> =>
      start(
        {},
        {
          controllers: [HotController],
          providers: [{ provide: APP_GUARD, useClass: HeaderAuthGuard }],
          trustProxy: true,
          listen,
        },
      );

    it('limits per route parameter, decoded: /by/param/%61lice is alice', async () => {
      const server = await hot();
      await request(server).get('/by/param/alice').expect(200);
      await request(server).get('/by/param/%61lice').expect(429);
      await request(server).get('/by/param/bob').expect(200);
    });

    it('limits per query parameter, and a repeated key counts each of its values', async () => {
      const server = await hot();
      await request(server).get('/by/query?key=a').expect(200);
      await request(server).get('/by/query?key=b&key=a').expect(429);
      await request(server).get('/by/query?key=b').expect(200);
      await request(server).get('/by/query?key=c&key=c').expect(200);
    });

    it('limits per header whatever the letter case of its name, and a repeated header counts each value', async () => {
      const server = await hot(true);
      await request(server).get('/by/header').set('x-api-key', 'k1').expect(200);
      await request(server).get('/by/header').set('X-API-KEY', 'k1').expect(429);
      await request(server).get('/by/header').set('x-api-key', 'k2').expect(200);
      const repeated = await new Promise<number>((resolve, reject) => {
        // Two x-api-key lines: Node would join them into "k2, k3", a value of its own.
        const req = httpRequest(
          { host: '127.0.0.1', port: portOf(server), path: '/by/header', agent: false },
          (res) => {
            res.resume();
            resolve(res.statusCode!);
          },
        );
        req.on('error', reject);
        req.setHeader('x-api-key', ['k2', 'k3']);
        req.end();
      });
      expect(repeated).toBe(429);
    });

    it('counts requests without the value together, as the value ""', async () => {
      const server = await hot();
      await request(server).get('/by/query').expect(200);
      await request(server).get('/by/query?key=').expect(429);
      await request(server).get('/by/header').expect(200);
      await request(server).get('/by/header').set('x-api-key', '').expect(429);
    });

    it("limits per authenticated user, read after the app's guards whatever their order", async () => {
      const server = await hot();
      await request(server).get('/by/user').set('x-user', 'u1').expect(200);
      await request(server).get('/by/user').set('x-user', 'u1').expect(429);
      await request(server).get('/by/user').set('x-user', 'u2').expect(200);
      await request(server).get('/by/org').set('x-user', 'u1').expect(200);
      await request(server).get('/by/org').set('x-user', 'u1').expect(429);
    });

    it('fails a request whose user lacks the named property, naming the option, rather than limiting nothing', async () => {
      const server = await hot();
      await request(server).get('/by/wrong-user').set('x-user', 'u1').expect(500);
      expect(fg.stats('HotController.byWrongUser')?.lastSecond.pass ?? 0).toBe(0);
    });

    it('limits per client address, IPv6 addresses by /64 network', async () => {
      const server = await hot();
      await request(server).get('/by/ip').set('x-forwarded-for', '2001:db8:1:2::1').expect(200);
      await request(server).get('/by/ip').set('x-forwarded-for', '2001:db8:1:2:ffff::9').expect(429);
      await request(server).get('/by/ip').set('x-forwarded-for', '2001:db8:1:3::1').expect(200);
      await request(server).get('/by/ip').set('x-forwarded-for', '192.0.2.1').expect(200);
      await request(server).get('/by/ip').set('x-forwarded-for', '::ffff:192.0.2.1').expect(429);
    });

    it('counts HEAD requests of a GET handler with its GET requests', async () => {
      const server = await hot();
      await request(server).head('/by/get-and-head?key=a').expect(200);
      await request(server).get('/by/get-and-head?key=a').expect(429);
    });
  });

  it('answers HEAD handlers with the status and headers of a block', async () => {
    const server = await start({}, { controllers: [HeadController] });
    await request(server).head('/head').expect(200);
    const blocked = await request(server).head('/head').expect(429);
    expect(blocked.headers['retry-after']).toBe('1');
  });
});
