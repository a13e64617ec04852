import type { RedisCommander } from './redis-commander';

/** The oldest Redis that runs Floodgate's scripts. */
export const MIN_REDIS_VERSION = '5.0.0';

/**
 * The server cannot run Floodgate's scripts: they read the server's clock (`TIME`) and then
 * write, which Redis allows only since 5.0 (it replicates scripts by their effects from then on).
 */
export class RedisVersionError extends Error {
  override readonly name = 'RedisVersionError';

  constructor(
    /** The `redis_version` the server reported. */
    readonly version: string,
  ) {
    super(
      `Floodgate cluster mode needs Redis >= ${MIN_REDIS_VERSION} (its scripts read TIME before writing, which Redis allows from 5.0), but the server reports redis_version ${version}`,
    );
  }
}

/** Whether `version` (`'7.0.15'`, `'4.0.14'`) is at least {@link MIN_REDIS_VERSION}. */
export function supportsScripts(version: string): boolean {
  const [major, minor = 0] = version.split('.').map(Number);
  const [minMajor, minMinor = 0] = MIN_REDIS_VERSION.split('.').map(Number);
  if (major === undefined || Number.isNaN(major)) return false;
  return major > minMajor! || (major === minMajor && minor >= minMinor);
}

/**
 * Asks the server its version (`INFO server`); resolves with it when it can run the scripts.
 * Valkey and other compatible servers report the Redis version they match as `redis_version`.
 * @throws RedisVersionError when the server is older than {@link MIN_REDIS_VERSION}; Error when
 * the reply names no version.
 */
export async function checkServerVersion(commander: RedisCommander): Promise<string> {
  const info = String(await commander.send(['INFO', 'server']));
  const version = /^redis_version:([^\r\n]+)/m.exec(info)?.[1]?.trim();
  if (version === undefined)
    throw new Error(`Floodgate cluster mode: the server's INFO names no redis_version: ${info.slice(0, 200)}`);
  if (!supportsScripts(version)) throw new RedisVersionError(version);
  return version;
}
