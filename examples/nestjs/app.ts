/**
 * A small NestJS API guarded by Floodgate, on Express or Fastify:
 * - every handler: at most 100 requests per second (the module's `defaults`), each its own;
 * - `GET /users/:id`: at most 5 requests per second per caller (`x-user-id`), 20 for the VIP;
 * - `GET /recommendations`: the service calls a flaky upstream through a slow-call circuit
 *   breaker (the module's `rules`, on the injected engine); while it is open, callers get their
 *   last good recommendations (stale), or a 503 if there are none;
 * - `GET /health`: not guarded.
 * `createApp()` initialises the app without listening; main.ts listens; see
 * test/examples/nestjs.test.ts.
 */
import 'reflect-metadata';
import {
  Controller,
  Get,
  Headers,
  Inject,
  Injectable,
  Module,
  Param,
  type DynamicModule,
  type INestApplication,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Floodgate } from '@floodgate/core';
import { FloodgateModule, HotParam, SkipFloodgate } from '@floodgate/nestjs';
import {
  FlakyRecommendations,
  GLOBAL_LIMIT,
  LastGoodRecommendations,
  PER_CALLER_LIMIT,
  RECOMMENDATIONS_BREAKER,
  type AppOptions,
  type RecommendationSource,
} from '../shared/recommendations';

/** Options of {@link createApp}: the shared example options and the platform. */
export interface NestAppOptions extends AppOptions {
  /** The HTTP platform. @defaultValue 'express' */
  readonly platform?: 'express' | 'fastify';
}

const UPSTREAM = Symbol('recommendations upstream');

/** What GET /recommendations answers. */
export interface Recommendations {
  readonly items: readonly string[];
  /** Whether these are the caller's last good recommendations, served while the breaker is open. */
  readonly stale: boolean;
}

@Controller('users')
export class UsersController {
  @Get(':id')
  @HotParam({ header: 'x-user-id', ...PER_CALLER_LIMIT }) // 5/s per caller, 20/s for the VIP
  find(@Param('id') id: string) {
    return { id, name: `User ${id}` };
  }
}

@Injectable()
export class RecommendationsService {
  private readonly lastGood = new LastGoodRecommendations();

  // Explicit tokens, so the example also runs under tsx (esbuild emits no decorator metadata).
  constructor(
    @Inject(Floodgate) private readonly fg: Floodgate,
    @Inject(UPSTREAM) private readonly upstream: RecommendationSource,
  ) {}

  /** Through the breaker; when it is open, the caller's last good answer, else the block (503). */
  forUser(caller: string): Promise<Recommendations> {
    return this.fg.run<Recommendations>(
      'RecommendationsService.forUser',
      async () => {
        const items = await this.upstream.forUser(caller);
        this.lastGood.remember(caller, items);
        return { items, stale: false };
      },
      {
        blockHandler: (error) => {
          const items = this.lastGood.get(caller);
          if (items === undefined) throw error; // answered 503 by FloodgateExceptionFilter
          return { items, stale: true };
        },
      },
    );
  }
}

@Controller('recommendations')
export class RecommendationsController {
  constructor(@Inject(RecommendationsService) private readonly recommendations: RecommendationsService) {}

  @Get()
  list(@Headers('x-user-id') user?: string) {
    return this.recommendations.forUser(user || 'anonymous');
  }
}

@Controller('health')
@SkipFloodgate()
export class HealthController {
  @Get()
  health() {
    return { ok: true };
  }
}

@Module({})
export class AppModule {
  /** The app's module, on the given engine and upstream. */
  static register(fg: Floodgate, upstream: RecommendationSource): DynamicModule {
    return {
      module: AppModule,
      imports: [
        FloodgateModule.forRoot({
          floodgate: fg,
          defaults: GLOBAL_LIMIT, // { rateLimit: { threshold: 100 } } for each handler
          rules: { circuitBreakers: [{ resource: 'RecommendationsService.forUser', ...RECOMMENDATIONS_BREAKER }] },
        }),
      ],
      controllers: [UsersController, RecommendationsController, HealthController],
      providers: [RecommendationsService, { provide: UPSTREAM, useValue: upstream }],
    };
  }
}

/** Builds and initialises the app (without listening). */
export async function createApp(options: NestAppOptions = {}): Promise<INestApplication> {
  const fg = options.floodgate ?? new Floodgate();
  const upstream = options.recommendations ?? new FlakyRecommendations(fg);
  const module = AppModule.register(fg, upstream);
  const app =
    options.platform === 'fastify'
      ? await NestFactory.create(module, new FastifyAdapter(), { logger: false })
      : await NestFactory.create(module, { logger: false });
  await app.init();
  if (options.platform === 'fastify')
    await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
  return app;
}
