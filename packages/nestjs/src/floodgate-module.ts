import { Floodgate, RuleValidationError } from '@floodgate/core';
import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { FloodgateExceptionFilter } from './floodgate-exception-filter';
import { FloodgateInterceptor } from './floodgate-interceptor';
import {
  FLOODGATE_MODULE_OPTIONS,
  readDefinitionOptions,
  type FloodgateModuleAsyncOptions,
  type FloodgateModuleOptions,
  type FloodgateOptionsFactory,
} from './floodgate-module-options';
import { FLOODGATE_MODULE_DEFINITION, FloodgateService } from './floodgate-service';

/**
 * Floodgate for a NestJS app (Express or Fastify platform). Guards every controller handler
 * (or, with `global: false`, those under `@UseInterceptors(FloodgateInterceptor)`) as the
 * resource `ControllerClass.methodName`, with the rules its `@RateLimit`, `@CircuitBreaker` and
 * `@HotParam` decorators (from this package), its controller's, the module's `defaults` and
 * `rules`, and any rules loaded at run time give it; answers blocks 429/503 through
 * {@link FloodgateExceptionFilter}. A global module: it provides `FloodgateService`,
 * `FloodgateInterceptor` and the engine (inject `Floodgate`) everywhere.
 *
 * Options are validated at start-up, each problem named; so are the handlers' decorators
 * (when their classes are defined) and their value sources against their routes.
 *
 * @example
 * @Module({
 *   imports: [FloodgateModule.forRoot({ defaults: { hotParam: { ip: true, threshold: 10 } } })],
 *   controllers: [UsersController],
 * })
 * export class AppModule {}
 */
@Module({})
export class FloodgateModule {
  /**
   * The module with options given now.
   * @throws RuleValidationError when `global` or `exceptionFilter` is not a boolean (the rest
   * is validated when the app starts).
   */
  static forRoot(options: FloodgateModuleOptions = {}): DynamicModule {
    const given = typeof options === 'object' && options !== null ? options : undefined;
    const decided = readDefinitionOptions(given);
    // The rest is validated at start-up, with everything else (a non-object included).
    const { global: _global, exceptionFilter: _filter, ...rest } = given ?? {};
    return definition(
      [{ provide: FLOODGATE_MODULE_OPTIONS, useValue: given === undefined ? options : rest }],
      [],
      decided,
    );
  }

  /**
   * The module with options made at start-up by a factory (`useFactory` with `inject`), or by
   * a class's `createFloodgateOptions()` (`useClass`, `useExisting`). `global` and
   * `exceptionFilter` are given here, not by the factory.
   * @throws RuleValidationError when not exactly one of `useFactory`, `useClass` and
   * `useExisting` is given, or `global` / `exceptionFilter` is not a boolean.
   * @example
   * FloodgateModule.forRootAsync({
   *   imports: [ConfigModule],
   *   inject: [ConfigService],
   *   useFactory: (config: ConfigService) => ({ defaults: { rateLimit: { threshold: config.get('RPS') } } }),
   * })
   */
  static forRootAsync(options: FloodgateModuleAsyncOptions): DynamicModule {
    const decided = readDefinitionOptions(options);
    const ways = (['useFactory', 'useClass', 'useExisting'] as const).filter((key) => options?.[key] !== undefined);
    if (ways.length !== 1) {
      throw new RuleValidationError(
        [
          {
            path: 'options',
            message:
              ways.length === 0
                ? 'needs one of useFactory, useClass or useExisting'
                : `give one of ${ways.join(', ')}, not both`,
          },
        ],
        'Invalid FloodgateModule.forRootAsync options',
      );
    }
    const create = (factory: FloodgateOptionsFactory): ReturnType<FloodgateOptionsFactory['createFloodgateOptions']> =>
      factory.createFloodgateOptions();
    const providers: Provider[] = [];
    if (options.useFactory !== undefined) {
      providers.push({
        provide: FLOODGATE_MODULE_OPTIONS,
        useFactory: options.useFactory,
        inject: options.inject ?? [],
      });
    } else if (options.useClass !== undefined) {
      providers.push(
        { provide: FLOODGATE_MODULE_OPTIONS, useFactory: create, inject: [options.useClass] },
        { provide: options.useClass, useClass: options.useClass },
      );
    } else {
      providers.push({ provide: FLOODGATE_MODULE_OPTIONS, useFactory: create, inject: [options.useExisting!] });
    }
    return definition(providers, options.imports ?? [], decided);
  }
}

function definition(
  optionProviders: Provider[],
  imports: NonNullable<DynamicModule['imports']>,
  decided: { readonly global: boolean; readonly exceptionFilter: boolean },
): DynamicModule {
  const providers: Provider[] = [
    ...optionProviders,
    { provide: FLOODGATE_MODULE_DEFINITION, useValue: decided },
    FloodgateService,
    FloodgateInterceptor,
    { provide: Floodgate, useFactory: (service: FloodgateService) => service.engine, inject: [FloodgateService] },
  ];
  if (decided.global) providers.push({ provide: APP_INTERCEPTOR, useClass: FloodgateInterceptor });
  if (decided.exceptionFilter) providers.push({ provide: APP_FILTER, useClass: FloodgateExceptionFilter });
  return {
    module: FloodgateModule,
    global: true,
    imports: [DiscoveryModule, ...imports],
    providers,
    exports: [FloodgateService, FloodgateInterceptor, Floodgate],
  };
}
