import type { Server } from 'node:http';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import type { AppSpec, Harness, Started } from './app-spec';
import type { RawConnection } from './raw-client';

/**
 * The per-test state of a suite that drives one framework's app with raw clients: a fresh engine
 * on a `ManualClock` before each test, the app started listening, and every raw client dropped
 * and the app closed after each test. Read its fields inside tests (they change per test).
 */
export class RawSession {
  clock = new ManualClock(10_000);
  fg = new Floodgate({ clock: this.clock });
  /** Raw clients to drop after the test. */
  clients: RawConnection[] = [];
  private app: Started | undefined;

  /** Registers the `beforeEach` and `afterEach` of the suite being described. */
  constructor(private readonly harness: Harness) {
    beforeEach(() => this.renew());
    afterEach(() => this.stop());
  }

  /** The errors that reached the framework's own error handling. */
  get errors(): unknown[] {
    return this.app?.errors ?? [];
  }

  /** A fresh engine on a fresh clock, for the next app (each property case makes its own). */
  renew(): void {
    this.clock = new ManualClock(10_000);
    this.fg = new Floodgate({ clock: this.clock });
    this.clients = [];
  }

  /** Builds the app on the session's engine; `prepare` sees its server before it listens. */
  async start(spec: Omit<AppSpec, 'floodgate'>, prepare?: (server: Server) => void): Promise<Server> {
    this.app = await this.harness.start({ floodgate: this.fg, ...spec });
    const { server } = this.app;
    prepare?.(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  /** Drops every raw client and closes the app. */
  async stop(): Promise<void> {
    for (const client of this.clients) client.destroy();
    this.clients = [];
    await this.app?.close();
    this.app = undefined;
  }

  /** Concurrency of `resource` now (0 when untracked). */
  concurrency(resource: string): number {
    return this.fg.stats(resource)?.concurrency ?? 0;
  }
}
