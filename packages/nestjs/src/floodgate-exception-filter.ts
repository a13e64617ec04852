import { BlockError } from '@floodgate/core';
import { Catch, Inject, Injectable, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { FloodgateService } from './floodgate-service';

/**
 * Answers a `BlockError` (thrown by {@link FloodgateInterceptor}, or by a service method
 * guarded with `@floodgate/core`'s decorators) as every Floodgate adapter does, through core's
 * `blockResponse()`: 429 for flow and hotspot blocks, 503 for an open circuit, 403 for
 * authority; `Retry-After` where the wait is known; the IETF RateLimit headers for QPS rules;
 * an `application/problem+json` body. Works on Express and Fastify (through the HTTP adapter).
 * Outside HTTP it rethrows.
 *
 * `FloodgateModule` registers it as an `APP_FILTER`. To answer blocks otherwise, give the
 * module `exceptionFilter: false` and register your own `@Catch(BlockError)` filter (globally,
 * or per controller with `@UseFilters`, which wins over global filters anyway).
 *
 * @example
 * @Catch(BlockError)
 * export class TeapotFilter implements ExceptionFilter {
 *   catch(error: BlockError, host: ArgumentsHost) {
 *     host.switchToHttp().getResponse<Response>().status(418).json({ retryAfterMs: error.retryAfterMs });
 *   }
 * }
 */
@Catch(BlockError)
@Injectable()
export class FloodgateExceptionFilter implements ExceptionFilter<BlockError> {
  constructor(
    @Inject(FloodgateService) private readonly floodgate: FloodgateService,
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
  ) {}

  /** Sends the block's status, headers and problem body, unless the response has begun. */
  catch(error: BlockError, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw error;
    const http = host.switchToHttp();
    const response: unknown = http.getResponse();
    const { status, headers, json } = this.floodgate.answer(error, http.getRequest(), response);
    const adapter = this.adapterHost.httpAdapter;
    if (adapter.isHeadersSent(response)) {
      // Blocked deep inside a streamed response: the status is gone; end it.
      adapter.end(response);
      return;
    }
    for (const name of Object.keys(headers)) adapter.setHeader(response, name, headers[name]!);
    adapter.reply(response, json, status);
  }
}
