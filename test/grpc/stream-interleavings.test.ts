/**
 * Streams hold their slot from admission to their end, however they end, on both sides: a
 * property over interleavings of stream openings, messages both ways, half-closes, server ends
 * and failures, and client cancels, on real grpc-js bidi calls over loopback. Two clients, each
 * guarded by its own engine with a concurrency limit of 2 on `Chat`, call one server guarded with
 * a limit of 3: both sides refuse calls. Each step waits until its effect is seen (the server got
 * the message, the client got its status), then the invariants are checked.
 */
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { Floodgate } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { clientInterceptor, serverInterceptor } from '@floodgate/grpc';
import { propertyRuns, propertyTimeoutMs } from '../support/property-runs';
import { until } from '../support/until';
import { echoClient, metadataOf, PATHS, startEchoServer, type EchoClient, type HeldCall } from './grpc-harness';

const SERVER_LIMIT = 3;
const CLIENT_LIMIT = 2;
const STREAMS = 6; // streams 0-2 on the first client, 3-5 on the second

type Step = { readonly op: 'open' | 'write' | 'reply' | 'end' | 'finish' | 'fail' | 'cancel'; readonly stream: number };

const step: fc.Arbitrary<Step> = fc.record({
  op: fc.constantFrom('open', 'open', 'open', 'open', 'write', 'reply', 'end', 'finish', 'fail', 'cancel'),
  stream: fc.integer({ min: 0, max: STREAMS - 1 }),
});

/** One stream as the test sees it: the client's call, the handler's record, and how it ended. */
interface Stream {
  readonly call: grpc.ClientDuplexStream<{ text: string }, { text: string }>;
  status: grpc.StatusObject | undefined;
  replies: number;
  record: HeldCall | undefined;
}

describe('gRPC stream slots', () => {
  it(
    'never leak, never exit twice and never exceed a limit, whatever the interleaving of messages, ends and cancels',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 10, maxLength: 30 }), async (steps) => {
          const serverEngine = new Floodgate({ clock: new ManualClock(0) });
          const clientEngines = [
            new Floodgate({ clock: new ManualClock(0) }),
            new Floodgate({ clock: new ManualClock(0) }),
          ];
          const server = await startEchoServer([
            serverInterceptor({
              floodgate: serverEngine,
              methods: { [PATHS.chat]: { rateLimit: { metric: 'concurrency', threshold: SERVER_LIMIT } } },
            }),
          ]);
          const clients: EchoClient[] = clientEngines.map((floodgate) =>
            echoClient(server.address, [
              clientInterceptor({
                floodgate,
                target: server.address,
                methods: { [PATHS.chat]: { rateLimit: { metric: 'concurrency', threshold: CLIENT_LIMIT } } },
              }),
            ]),
          );
          const clientResource = `${server.address}${PATHS.chat}`;
          const streams = new Map<number, Stream>();
          const live = (s: Stream | undefined): s is Stream => s !== undefined && s.status === undefined;
          const recordOf = (name: string): HeldCall | undefined =>
            server.held.find((call) => call.metadata.get('x-stream')[0] === name);
          const ended: Stream[] = [];
          let opened = 0;
          let blocked = 0;

          const check = (): void => {
            const open = [...streams.values()].filter(live);
            // Each side holds exactly the slots of the calls it admitted that have not ended, within its limit.
            expect(serverEngine.stats(PATHS.chat)?.concurrency ?? 0).toBe(
              open.filter((s) => s.record !== undefined).length,
            );
            expect(server.mostRunning()).toBeLessThanOrEqual(SERVER_LIMIT);
            clientEngines.forEach((engine, side) => {
              const mine = open.filter((s) => streamsOf(side).includes(indexOf(streams, s)));
              expect(engine.stats(clientResource)?.concurrency ?? 0).toBe(mine.length);
              expect(mine.length).toBeLessThanOrEqual(CLIENT_LIMIT);
            });
          };

          try {
            for (const { op, stream: i } of steps) {
              const s = streams.get(i);
              if (op === 'open') {
                // A stream index is reused once its stream has ended.
                if (live(s)) continue;
                if (s !== undefined) ended.push(s);
                const name = `${i}.${opened++}`;
                const call = clients[i < 3 ? 0 : 1]!.chat(metadataOf({ 'x-stream': name }));
                const fresh: Stream = { call, status: undefined, replies: 0, record: undefined };
                streams.set(i, fresh);
                call.on('error', () => undefined);
                call.on('data', () => fresh.replies++);
                call.on('status', (status: grpc.StatusObject) => {
                  fresh.status = status;
                  if (status.code === grpc.status.RESOURCE_EXHAUSTED) blocked++;
                });
                // Opened when the handler has it (its first message makes the server see it), or refused.
                call.write({ text: `open ${name}` });
                await until(
                  () => fresh.status !== undefined || (fresh.record = recordOf(name)) !== undefined,
                  `stream ${name} open`,
                );
              } else if (!live(s)) continue;
              else if (op === 'write' && s.record !== undefined && !s.record.ended()) {
                const before = s.record.messages.length;
                s.call.write({ text: 'more' });
                await until(() => s.record!.messages.length > before, `stream ${i} message`);
              } else if (op === 'reply' && s.record !== undefined) {
                const before = s.replies;
                s.record.write({ text: 'back', index: before });
                await until(() => s.replies > before, `stream ${i} reply`);
              } else if (op === 'end' && s.record !== undefined && !s.record.ended()) {
                s.call.end();
                await until(() => s.record!.ended(), `stream ${i} half-close`);
              } else if ((op === 'finish' || op === 'fail') && s.record !== undefined) {
                if (op === 'finish') s.record.finish();
                else s.record.fail(grpc.status.INTERNAL);
                await until(() => s.status !== undefined, `stream ${i} status`);
              } else if (op === 'cancel') {
                s.call.cancel();
                await until(() => s.status !== undefined && s.record?.cancelled() !== false, `stream ${i} cancelled`);
              } else continue;
              check();
            }
            for (const s of streams.values()) if (live(s)) s.call.cancel();
            await until(
              () =>
                [...streams.values(), ...ended].every((s) => s.status !== undefined && s.record?.cancelled() !== false),
              'every stream ended',
            );
            check();
            // Every admitted call exited once: passes = exits + calls given back, on every engine.
            for (const [engine, resource] of [
              [serverEngine, PATHS.chat],
              ...clientEngines.map((engine) => [engine, clientResource] as const),
            ] as const) {
              const totals = engine.totals(resource) ?? { pass: 0, success: 0, cancel: 0, block: 0 };
              expect(totals.pass).toBe(totals.success + totals.cancel);
              expect(engine.stats(resource)?.concurrency ?? 0).toBe(0);
            }
            const blocks = [serverEngine.totals(PATHS.chat), ...clientEngines.map((e) => e.totals(clientResource))];
            expect(blocks.reduce((sum, totals) => sum + (totals?.block ?? 0), 0)).toBe(blocked);
          } finally {
            for (const c of clients) c.close();
            await server.close();
          }
        }),
        propertyRuns(30),
      );
    },
    propertyTimeoutMs(30),
  );
});

function streamsOf(side: number): number[] {
  return side === 0 ? [0, 1, 2] : [3, 4, 5];
}

function indexOf(streams: Map<number, Stream>, stream: Stream): number {
  for (const [i, s] of streams) if (s === stream) return i;
  return -1;
}
