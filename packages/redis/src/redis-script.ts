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
