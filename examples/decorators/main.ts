/**
 * Drives examples/decorators/user-service.ts through a few seconds of simulated time (a
 * ManualClock, so it runs instantly and prints the same every time).
 * Run: `npx tsx --conditions=@floodgate/source examples/decorators/main.ts`.
 */
import { Floodgate, getGuardedMethods, isBlockError } from '@floodgate/core';
import { ManualClock } from '@floodgate/core/testing';
import { createUserService, type Profile, type UserBackend } from './user-service';

/** An in-memory backend whose recommendations API can be switched off. */
export interface DemoBackend extends UserBackend {
  /** Whether the recommendations API fails. */
  failing: boolean;
  /** How many times the recommendations API was called. */
  recommendationCalls: number;
}

/** A backend for the demo and its test. */
export function createDemoBackend(): DemoBackend {
  const backend: DemoBackend = {
    failing: false,
    recommendationCalls: 0,
    async loadProfile(userId: string): Promise<Profile> {
      return { id: userId, name: userId[0]!.toUpperCase() + userId.slice(1) };
    },
    async recommendations(userId: string): Promise<readonly string[]> {
      backend.recommendationCalls++;
      if (backend.failing) throw new Error('recommendations API unavailable');
      return [`for ${userId}: books`, `for ${userId}: music`];
    },
    search(query: string): readonly string[] {
      return [`${query} #1`, `${query} #2`];
    },
  };
  return backend;
}

/** Runs the demo; returns the lines it prints. */
export async function main(): Promise<string[]> {
  const clock = new ManualClock(Date.now());
  const fg = new Floodgate({ clock });
  const backend = createDemoBackend();
  const users = createUserService(backend, fg);
  const lines: string[] = [];
  const outcome = (error: unknown): string =>
    isBlockError(error) ? `blocked (${error.code})` : `failed (${String(error)})`;

  lines.push('Guarded methods:');
  for (const method of getGuardedMethods(users)) {
    const kinds = Object.entries(method.rules)
      .filter(([, rules]) => rules.length > 0)
      .map(([kind]) => kind);
    lines.push(`  ${method.resource}: ${kinds.join(', ')}`);
  }

  lines.push('', '@HotParam: 2 calls per second per user');
  for (const userId of ['alice', 'alice', 'alice', 'bob']) {
    const result = await users.getProfile(userId).then((p) => `ok (${p.name})`, outcome);
    lines.push(`  getProfile(${userId}) ${result}`);
  }

  lines.push('', '@CircuitBreaker: a flaky recommendations API, with a cached fallback');
  const recommend = async (note: string): Promise<void> => {
    const before = backend.recommendationCalls;
    const r = await users.getRecommendations('alice');
    const called = backend.recommendationCalls > before ? 'API called' : 'API not called';
    lines.push(`  ${note.padEnd(22)} ${r.source.padEnd(20)} ${called}: ${r.items.join(', ')}`);
  };
  await recommend('healthy');
  backend.failing = true;
  for (let i = 1; i <= 3; i++) await recommend(`API down, call ${i}`);
  await recommend('circuit open');
  backend.failing = false;
  await clock.advance(10_000);
  await recommend('10 s later (probe)');
  lines.push(
    `  circuit: ${fg
      .circuitState('UserService.getRecommendations')
      .map((s) => s.state)
      .join(', ')}`,
  );

  lines.push('', '@RateLimit: 5 searches per second');
  let passed = 0;
  let blocked = 0;
  for (let i = 0; i < 8; i++) {
    try {
      users.search('lamps');
      passed++;
    } catch (error) {
      if (!isBlockError(error)) throw error;
      blocked++;
    }
  }
  lines.push(`  8 searches: ${passed} passed, ${blocked} blocked`);
  return lines;
}

if (require.main === module) {
  void main().then((lines) => console.log(lines.join('\n')));
}
