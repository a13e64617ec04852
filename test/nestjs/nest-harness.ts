import type { Server } from 'node:http';
import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';

/** The two HTTP platforms Nest runs on. */
export type Platform = 'express' | 'fastify';
export const PLATFORMS: readonly Platform[] = ['express', 'fastify'];

/** A started Nest app (initialised, not listening: supertest listens on a free port). */
export interface NestHarness {
  readonly app: INestApplication;
  readonly server: Server;
  close(): Promise<void>;
}

/** Options of {@link startNest}. */
export interface StartOptions {
  /** Fastify: trust X-Forwarded-For (for client address tests). Express: `trust proxy`. */
  readonly trustProxy?: boolean;
  /** Runs before `init()` (global prefix, extra middleware). */
  readonly configure?: (app: INestApplication) => void;
}

/** Builds a real Nest app on `platform` from module metadata, with @nestjs/testing, and initialises it. */
export async function startNest(
  platform: Platform,
  metadata: ModuleMetadata,
  options: StartOptions = {},
): Promise<NestHarness> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app =
    platform === 'express'
      ? moduleRef.createNestApplication({ logger: false })
      : moduleRef.createNestApplication(new FastifyAdapter({ trustProxy: options.trustProxy === true }), {
          logger: false,
        });
  if (platform === 'express' && options.trustProxy === true)
    (app.getHttpAdapter().getInstance() as { set(k: string, v: unknown): void }).set('trust proxy', true);
  options.configure?.(app);
  await app.init();
  if (platform === 'fastify') await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
  return { app, server: app.getHttpServer() as Server, close: () => app.close() };
}

/**
 * Initialising an app that must fail: the error `init()` (or compiling the module) throws.
 * Fails the test when it starts.
 */
export async function startFailure(platform: Platform, metadata: ModuleMetadata): Promise<Error> {
  let harness: NestHarness | undefined;
  try {
    harness = await startNest(platform, metadata);
  } catch (error) {
    return error as Error;
  }
  await harness.close();
  throw new Error('the app started');
}

/** A promise to settle from outside, for handlers a test holds open. */
export class Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve!: (value: T) => void;
  constructor() {
    this.promise = new Promise<T>((resolve) => {
      this.resolve = resolve;
    });
  }
}

/** Polls (through the event loop, never a timer) until `check` holds; fails after `tries` turns. */
export async function eventually(check: () => boolean, tries = 10_000): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (check()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`still false after ${tries} turns of the event loop: ${check.toString()}`);
}

/** The port of a listening server. */
export function portOf(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server is not listening on a port');
  return address.port;
}
