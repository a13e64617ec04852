/**
 * A real Redis Cluster for tests: six `redis-server --cluster-enabled yes` nodes on free
 * loopback ports in a temp dir, joined by `redis-cli --cluster create` as three masters with one
 * replica each, used through ioredis's `Redis.Cluster`. Start it in `beforeAll` and stop it in
 * `afterAll` (see {@link useRedisCluster}): every node is stopped even when a test fails.
 *
 * The programs: redis-server from the test services (FLOODGATE_REDIS_SERVER_BIN), with
 * redis-cli beside it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import Redis, { Cluster } from 'ioredis';
import { freePort, serviceBinary } from '../../support/test-services';

const run = promisify(execFile);

/** One node of the cluster. */
export interface ClusterNode {
  readonly port: number;
  readonly busPort: number;
  readonly child: ChildProcess;
}

/** A running Redis Cluster of three masters and three replicas. */
export interface RedisClusterNodes {
  readonly nodes: readonly ClusterNode[];
  /** `{ host, port }` of every node, for `new Redis.Cluster(startupNodes)`. */
  readonly startupNodes: readonly { host: string; port: number }[];
  /** An ioredis cluster client, disconnected by {@link RedisClusterNodes.stop}. */
  client(): Cluster;
  /** A plain connection to one node (admin commands), disconnected by {@link RedisClusterNodes.stop}. */
  node(port: number): Redis;
  /** The port of the master serving `key`'s slot now. */
  masterOf(key: string): Promise<number>;
  /**
   * Fails over the master of `key`'s slot: `CLUSTER FAILOVER` on one of its replicas, then waits
   * until that replica serves the slot and the cluster is ok. Resolves with the new master's port.
   */
  failover(key: string): Promise<number>;
  /** Stops every node and removes the temp dir. */
  stop(): Promise<void>;
}

function programs(): { server: string; cli: string } {
  const server = serviceBinary('redis-server');
  const cli = join(dirname(server), 'redis-cli');
  for (const path of [server, cli]) {
    if (!existsSync(path)) {
      throw new Error(
        `The Redis Cluster tests need ${path}: install it (apt-get install -y redis-server) or set FLOODGATE_REDIS_SERVER_BIN to a redis-server with redis-cli beside it`,
      );
    }
  }
  return { server, cli };
}

/** Polls `condition` (real I/O) every 50 ms for up to `ms`. */
async function poll(condition: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`Redis Cluster: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts six nodes and joins them into a cluster; resolves once every node says `cluster_state:ok`. */
export async function startRedisCluster(): Promise<RedisClusterNodes> {
  const { server, cli } = programs();
  const dir = mkdtempSync(join(tmpdir(), 'floodgate-redis-cluster-'));
  const nodes: ClusterNode[] = [];
  const admins = new Map<number, Redis>();
  const clients: Cluster[] = [];

  const stop = async (): Promise<void> => {
    for (const client of clients) client.disconnect();
    for (const admin of admins.values()) admin.disconnect();
    await Promise.all(
      nodes.map(
        (node) =>
          new Promise<void>((resolve) => {
            if (node.child.exitCode !== null || node.child.signalCode !== null) return resolve();
            node.child.once('exit', () => resolve());
            node.child.kill('SIGCONT'); // a test may have stopped it
            node.child.kill('SIGKILL');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };

  const node = (port: number): Redis => {
    let admin = admins.get(port);
    if (admin === undefined) {
      admin = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
      admin.on('error', () => undefined);
      admins.set(port, admin);
    }
    return admin;
  };

  try {
    for (let i = 0; i < 6; i++) {
      const port = await freePort();
      const busPort = await freePort();
      const child = spawn(
        server,
        [
          '--port',
          String(port),
          '--cluster-port',
          String(busPort),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          '2000',
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--loglevel',
          'warning',
        ],
        { stdio: 'ignore' },
      );
      nodes.push({ port, busPort, child });
    }
    for (const n of nodes)
      await poll(async () => (await node(n.port).ping()) === 'PONG', 10_000, `node ${n.port} to start`);
    await run(
      cli,
      ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes'],
      { timeout: 30_000 },
    );
    await waitClusterOk(nodes, node);
  } catch (error) {
    await stop();
    throw error;
  }

  /** The ports serving `key`'s slot: its master first, then its replicas. */
  const servers = async (key: string): Promise<number[]> => {
    const admin = node(nodes[0]!.port);
    const slot = (await admin.call('CLUSTER', 'KEYSLOT', key)) as number;
    const shards = (await admin.call('CLUSTER', 'SLOTS')) as [number, number, ...[string, number, string][]][];
    const owner = shards.find(([from, to]) => slot >= from && slot <= to);
    if (owner === undefined) throw new Error(`Redis Cluster: no master serves slot ${slot}`);
    return (owner.slice(2) as [string, number, string][]).map((server) => server[1]);
  };
  const masterOf = async (key: string): Promise<number> => (await servers(key))[0]!;

  return {
    nodes,
    startupNodes: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    client() {
      const client = new Cluster(
        nodes.slice(0, 3).map((n) => ({ host: '127.0.0.1', port: n.port })),
        {
          redisOptions: { maxRetriesPerRequest: 1 },
          clusterRetryStrategy: () => 100,
        },
      );
      client.on('error', () => undefined);
      clients.push(client);
      return client;
    },
    node,
    masterOf,
    async failover(key) {
      const master = await masterOf(key);
      let replica: number | undefined;
      await poll(
        async () => (replica = (await servers(key))[1]) !== undefined,
        10_000,
        `a replica of the master on ${master}`,
      );
      await node(replica!).call('CLUSTER', 'FAILOVER');
      await poll(async () => (await masterOf(key)) === replica, 15_000, `the replica on ${replica} to take over`);
      await waitClusterOk(nodes, node);
      return replica!;
    },
    stop,
  };
}

async function waitClusterOk(nodes: readonly ClusterNode[], node: (port: number) => Redis): Promise<void> {
  for (const n of nodes) {
    await poll(
      async () => /cluster_state:ok/.test(String(await node(n.port).call('CLUSTER', 'INFO'))),
      20_000,
      `cluster_state:ok on ${n.port}`,
    );
  }
}

/**
 * Gives every test of the calling file one Redis Cluster, started in `beforeAll` and stopped in
 * `afterAll`; read `cluster` inside tests and hooks.
 */
export function useRedisCluster(): { readonly cluster: RedisClusterNodes } {
  let cluster: RedisClusterNodes | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  return {
    get cluster(): RedisClusterNodes {
      if (cluster === undefined)
        throw new Error('useRedisCluster(): the cluster is not started yet (read it inside a test or hook)');
      return cluster;
    },
  };
}
