import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKafka } from '../../lib/kafka.js';
import { waitFor } from '../../lib/wait.js';
import { stackLayout } from '../../stack/config.js';
import { connectComponent } from '../../stack/connect.js';
import { tailFile } from '../../stack/processes.js';
import { freePort } from '../slot-monitor/support/alertmanager-process.js';
import { track } from './leak-guard.js';
import { testLogger } from './seat-pipeline.js';
import { endpoints, uniqueName } from './stack.js';

/** A Kafka Connect worker of its own cluster, on the stack's Kafka: a test may kill it without disturbing anyone. */
export interface ConnectWorker {
  url: string;
  /** The topic where this worker's cluster stores connector configurations. */
  configTopic: string;
  /** Process id while it runs. */
  pid(): number | undefined;
  /** Starts it again after a crash, with the same group and storage topics, and waits until it answers. */
  restart(): Promise<void>;
  /** Stops it, deletes its storage topics and its folder. Tracked by the leak guard. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 180_000;

/**
 * Starts a Connect worker through the launcher's own component with a home, REST port, group.id
 * and config/offset/status topics of its own and a small heap; the downloads are the stack's.
 * `secretEnv` replaces the local stack's secrets in its environment (DEBEZIUM_DB_PASSWORD).
 */
export async function startConnectWorker(prefix: string, heapMb = 384, secretEnv?: Parameters<typeof connectComponent>[2]): Promise<ConnectWorker> {
  const shared = stackLayout();
  const name = uniqueName(prefix).toLowerCase();
  const home = mkdtempSync(join(tmpdir(), `stagefront-${name}-`));
  const port = await freePort();
  const layout = stackLayout({ ...process.env, STACK_HOME: home, STACK_DIST: shared.dist, STACK_CONNECT_PORT: String(port), STACK_CONNECT_HEAP_MB: String(heapMb) });
  const storageTopicPrefix = `_${name}`;
  const component = connectComponent(layout, { groupId: name, storageTopicPrefix }, secretEnv);
  const url = `http://127.0.0.1:${port}`;

  const launch = async () => {
    await component.launch();
    const outcome = await waitFor(async () => (component.pid() === undefined ? 'exited' : (await component.healthy()) && 'healthy'), {
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 500,
      description: `Connect worker ${name} on port ${port} to answer with the Debezium plugin (log: ${component.logFile})`,
    });
    if (outcome === 'exited') throw new Error(`Connect worker ${name} exited during start-up; last log lines:\n${tailFile(component.logFile)}`);
  };
  const stop = track(`Connect worker ${name}`, async () => {
    await component.stop();
    await deleteTopics([`${storageTopicPrefix}-configs`, `${storageTopicPrefix}-offsets`, `${storageTopicPrefix}-status`]);
    rmSync(home, { recursive: true, force: true });
  });
  try {
    await launch();
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, configTopic: `${storageTopicPrefix}-configs`, pid: () => component.pid(), restart: launch, stop };
}

async function deleteTopics(topics: string[]): Promise<void> {
  const admin = createKafka({ brokers: endpoints().kafkaBrokers, clientId: 'test-connect-worker', logger: testLogger }).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const mine = topics.filter((t) => existing.has(t));
    if (mine.length > 0) await admin.deleteTopics({ topics: mine });
  } finally {
    await admin.disconnect();
  }
}
