import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';

/** Where and with what a run happened. */
export interface MachineInfo {
  readonly node: string;
  readonly v8: string;
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGb: number;
  /** 1-minute load average when the run started and when it ended. */
  readonly loadStart: number;
  loadEnd: number;
  /** Installed versions of the libraries compared. */
  readonly versions: Record<string, string>;
}

/** The packages whose versions the report states. */
export const REPORTED_PACKAGES = [
  'express',
  'koa',
  '@koa/router',
  'fastify',
  '@grpc/grpc-js',
  'express-rate-limit',
  'koa-ratelimit',
  '@fastify/rate-limit',
  'rate-limiter-flexible',
  'opossum',
  'cockatiel',
  'mitata',
  'autocannon',
  'typescript',
] as const;

/** Reads the machine and the installed versions (from `<root>/node_modules/<pkg>/package.json`). */
export function machineInfo(root: string): MachineInfo {
  const versions: Record<string, string> = {};
  for (const name of ['@floodgate/core', ...REPORTED_PACKAGES]) {
    try {
      versions[name] = (
        JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }
      ).version;
    } catch {
      versions[name] = 'not installed';
    }
  }
  return {
    node: process.version,
    v8: process.versions.v8,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: availableParallelism(),
    memoryGb: Math.round(totalmem() / 2 ** 30),
    loadStart: loadavg()[0]!,
    loadEnd: Number.NaN,
    versions,
  };
}

/** The commit measured, as `git describe --always --dirty` says it; undefined outside a git checkout. */
export function commitMeasured(root: string): string | undefined {
  try {
    return execFileSync('git', ['describe', '--always', '--dirty'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}
