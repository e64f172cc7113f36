import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKafka } from '../../lib/kafka.js';
import { waitFor } from '../../lib/wait.js';
import { stackLayout } from '../../stack/config.js';
import { type ConnectCluster, connectComponent } from '../../stack/connect.js';
import { tailFile } from '../../stack/processes.js';
import { freePort } from '../slot-monitor/support/alertmanager-process.js';
import { track } from './leak-guard.js';
import { testLogger } from './seat-pipeline.js';
import { endpoints, uniqueName } from './stack.js';

/** A Kafka Connect worker of its own cluster, on the stack's Kafka: a test may kill it without disturbing anyone. */
export interface ConnectWorker {
  url: string;
  /** How Connect names this worker in a status's worker_id (its advertised host:port). */
  workerId: string;
  /** The topic where this worker's cluster stores connector configurations. */
  configTopic: string;
  /** Its stack home: connect/ holds its properties and REST authentication files, logs/ its log. */
  home: string;
  logFile: string;
  /** Process id while it runs. */
  pid(): number | undefined;
  /** Starts it again after a crash, with the same group and storage topics, and waits until it answers. */
  restart(): Promise<void>;
  /** Stops it, deletes its storage topics and its folder. Tracked by the leak guard. */
  stop(): Promise<void>;
}

/** Several Connect workers of ONE cluster of their own (one group, one set of storage topics). */
export interface ConnectWorkerCluster {
  workers: ConnectWorker[];
  /** The cluster's group.id: its workers are the members of this Kafka group. */
  groupId: string;
  /** Every worker's URL, comma separated: a CONNECT_URL that survives the death of any one worker. */
  connectUrl: string;
  configTopic: string;
  /** Stops every worker, then deletes the storage topics and the folders. Tracked by the leak guard. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 180_000;

type SecretEnv = Parameters<typeof connectComponent>[2];

/** One worker process of `cluster`, in a home of its own with a free REST port; not started yet. */
async function workerProcess(name: string, cluster: ConnectCluster, heapMb: number, secretEnv: SecretEnv) {
  const shared = stackLayout();
  const home = mkdtempSync(join(tmpdir(), `stagefront-${name}-`));
  const port = await freePort();
  const layout = stackLayout({
    ...process.env,
    STACK_HOME: home,
    STACK_DIST: shared.dist,
    STACK_CONNECT_PORT: String(port),
    STACK_CONNECT_HEAP_MB: String(heapMb),
  });
  const component = connectComponent(layout, cluster, secretEnv);
  const launch = async () => {
    await component.launch();
    const outcome = await waitFor(
      async () => (component.pid() === undefined ? 'exited' : (await component.healthy()) && 'healthy'),
      {
        timeoutMs: READY_TIMEOUT_MS,
        intervalMs: 500,
        description: `Connect worker ${name} on port ${port} to answer with the Debezium plugin (log: ${component.logFile})`,
      },
    );
    if (outcome === 'exited')
      throw new Error(`Connect worker ${name} exited during start-up; last log lines:\n${tailFile(component.logFile)}`);
  };
  const remove = async () => {
    await component.stop();
    rmSync(home, { recursive: true, force: true });
  };
  return {
    url: `http://127.0.0.1:${port}`,
    workerId: `127.0.0.1:${port}`,
    home,
    logFile: component.logFile,
    pid: () => component.pid(),
    launch,
    remove,
  };
}

const storageTopics = (prefix: string) => [`${prefix}-configs`, `${prefix}-offsets`, `${prefix}-status`];

/**
 * Starts a Connect worker through the launcher's own component with a home, REST port, group.id
 * and config/offset/status topics of its own and a small heap; the downloads are the stack's.
 * `secretEnv` replaces the local stack's secrets in its environment (DEBEZIUM_DB_PASSWORD).
 */
export async function startConnectWorker(prefix: string, heapMb = 384, secretEnv?: SecretEnv): Promise<ConnectWorker> {
  const name = uniqueName(prefix).toLowerCase();
  const storageTopicPrefix = `_${name}`;
  const worker = await workerProcess(name, { groupId: name, storageTopicPrefix }, heapMb, secretEnv);
  const stop = track(`Connect worker ${name}`, async () => {
    await worker.remove();
    await deleteTopics(storageTopics(storageTopicPrefix));
  });
  try {
    await worker.launch();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: worker.url,
    workerId: worker.workerId,
    configTopic: `${storageTopicPrefix}-configs`,
    home: worker.home,
    logFile: worker.logFile,
    pid: worker.pid,
    restart: worker.launch,
    stop,
  };
}

/**
 * Starts `count` Connect workers of one new cluster (one group.id and storage topics, each worker
 * with its own home, REST port and log, a small heap), at once, and waits until each answers. Any
 * worker may be killed and restarted; `stop` of one worker leaves the others and the topics.
 */
export async function startConnectCluster(
  prefix: string,
  count = 2,
  heapMb = 320,
  secretEnv?: SecretEnv,
): Promise<ConnectWorkerCluster> {
  const name = uniqueName(prefix).toLowerCase();
  const storageTopicPrefix = `_${name}`;
  const cluster: ConnectCluster = { groupId: name, storageTopicPrefix };
  const processes = await Promise.all(
    Array.from({ length: count }, (_, i) => workerProcess(`${name}-${i + 1}`, cluster, heapMb, secretEnv)),
  );
  const stop = track(`Connect cluster ${name} (${count} workers)`, async () => {
    await Promise.all(processes.map((worker) => worker.remove()));
    await deleteTopics(storageTopics(storageTopicPrefix));
  });
  try {
    await Promise.all(processes.map((worker) => worker.launch()));
  } catch (error) {
    await stop();
    throw error;
  }
  const configTopic = `${storageTopicPrefix}-configs`;
  return {
    workers: processes.map((w) => ({
      url: w.url,
      workerId: w.workerId,
      configTopic,
      home: w.home,
      logFile: w.logFile,
      pid: w.pid,
      restart: w.launch,
      stop: w.remove,
    })),
    groupId: name,
    connectUrl: processes.map((w) => w.url).join(','),
    configTopic,
    stop,
  };
}

async function deleteTopics(topics: string[]): Promise<void> {
  const admin = createKafka({
    brokers: endpoints().kafkaBrokers,
    clientId: 'test-connect-worker',
    logger: testLogger,
  }).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const mine = topics.filter((t) => existing.has(t));
    if (mine.length > 0) await admin.deleteTopics({ topics: mine });
  } finally {
    await admin.disconnect();
  }
}
