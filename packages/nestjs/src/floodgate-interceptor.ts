import type { GuardVerdict } from '@floodgate/core/http';
import { Inject, Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { catchError, NEVER, throwError, type Observable } from 'rxjs';
import { FloodgateService } from './floodgate-service';

/**
 * Guards controller handlers: each request enters its handler's resource once
 * ({@link FloodgateService.admit}) before the route's pipes and handler run; its outcome is
 * recorded when the response is ended (however slowly the client reads it), and the entry
 * exits when the response closes (finished, or the client gone; a streamed response when its
 * stream ends). A block is thrown as the `BlockError`, for {@link FloodgateExceptionFilter} to
 * answer 429/503; what the handler throws is recorded for circuit breakers.
 *
 * An interceptor rather than a guard: interceptors run after every guard, so a per-user
 * `@HotParam({ user })` sees `req.user` whatever order the guards are registered in, and it
 * sees the handler's error and the response it returns. `FloodgateModule` provides it for every
 * handler (`global: true`, the default); with `global: false`, apply it per controller or handler.
 *
 * @example
 * @Controller('users')
 * @UseInterceptors(FloodgateInterceptor)      // with FloodgateModule.forRoot({ global: false })
 * export class UsersController { ... }
 */
@Injectable()
export class FloodgateInterceptor implements NestInterceptor {
  /** Marks the class for the module's start-up check of `@UseInterceptors()`, across package copies. */
  static readonly floodgateInterceptor = true;

  constructor(@Inject(FloodgateService) private readonly floodgate: FloodgateService) {}

  /** Admits the request to its handler's resource, then calls the handler, or throws the block. */
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> | Promise<Observable<unknown>> {
    const handler = this.floodgate.handlerOf(context);
    if (handler === undefined) return next.handle();
    const http = context.switchToHttp();
    const request = http.getRequest<{ readonly params?: unknown }>();
    const response: unknown = http.getResponse();
    const verdict = this.floodgate.admit(handler, request, response);
    if (verdict instanceof Promise) return verdict.then((settled) => this.proceed(settled, response, next));
    return this.proceed(verdict, response, next);
  }

  private proceed(verdict: GuardVerdict, response: unknown, next: CallHandler): Observable<unknown> {
    if (verdict === 'aborted') {
      // The client left (before admission, or while queued): nobody to answer, nothing to run.
      // As Floodgate's Express middleware leaves such a request, it is left unanswered.
      return NEVER;
    }
    if (verdict !== undefined) throw verdict;
    return next.handle().pipe(
      catchError((error: unknown) => {
        this.floodgate.traceError(response, error);
        return throwError(() => error);
      }),
    );
  }
}
