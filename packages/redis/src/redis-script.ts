import { createHash } from 'node:crypto';
import type { RedisCommander } from './redis-commander';

/** Whether `error` is Redis's answer to EVALSHA for a script it does not hold. */
export function isNoScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}

/**
 * A Lua script run atomically with EVALSHA. Redis keeps scripts in a cache that a restart or
 * `SCRIPT FLUSH` empties: on `NOSCRIPT` the script is sent once in full with EVAL (which caches
 * it again) and later calls go back to EVALSHA.
 */
export class RedisScript {
  /** The script's SHA1, as Redis names it. */
  readonly sha: string;

  constructor(
    /** A name for errors. */
    readonly name: string,
    /** The Lua source. */
    readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** The EVALSHA command running the script on `keys` with `args`. */
  command(keys: readonly string[], args: readonly string[]): string[] {
    return ['EVALSHA', this.sha, String(keys.length), ...keys, ...args];
  }

  /** The EVAL command equivalent to {@link RedisScript.command}'s EVALSHA `command`: the script in full. */
  inFull(command: readonly string[]): string[] {
    const full = command.slice();
    full[0] = 'EVAL';
    full[1] = this.source;
    return full;
  }

  /** Runs the script on `keys`. */
  async run(commander: RedisCommander, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    const count = String(keys.length);
    try {
      return await commander.send(['EVALSHA', this.sha, count, ...keys, ...args]);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return commander.send(['EVAL', this.source, count, ...keys, ...args]);
    }
  }

  /** Loads the script into Redis's cache (`SCRIPT LOAD`), so the first EVALSHA finds it. */
  async load(commander: RedisCommander): Promise<void> {
    await commander.send(['SCRIPT', 'LOAD', this.source]);
  }
}

/**
 * The start of every Floodgate script. `now` is ARGV[1] when the backend was given a shared
 * time source, else Redis's own clock (TIME, with microseconds), so that instances need no
 * synchronised clocks (a script may read TIME and then write since Redis 5, which replicates
 * scripts by their effects). `fmt` writes numbers with full precision, for stored times
 * (`tostring` keeps 14 digits, too few for epoch milliseconds with fractions).
 */
export const LUA_PRELUDE = `
local now = tonumber(ARGV[1])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local function fmt(x) return string.format('%.17g', x) end
`;
