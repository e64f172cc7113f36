/**
 * A Kafka cluster of its own for fault drills: STACK_KAFKA_BROKERS KRaft nodes and one Connect
 * worker started through the launcher's own components, in a temporary stack home with free
 * ports (the downloads are the stack's). A test may kill any of its processes; the shared stack
 * is never touched.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../lib/wait.js';
import type { Component } from '../../stack/component.js';
import { type StackLayout, stackEndpoints, stackLayout } from '../../stack/config.js';
import { connectComponent } from '../../stack/connect.js';
import { freePortRun } from '../../stack/own-stack.js';
import { kafkaComponents } from '../../stack/kafka.js';
import { isAlive, tailFile } from '../../stack/processes.js';
import { freePort } from '../slot-monitor/support/alertmanager-process.js';
import { track } from './leak-guard.js';
import { uniqueName } from './stack.js';

interface KafkaNodeProcess {
  nodeId: number;
  broker: string;
  pid(): number | undefined;
}

export interface OwnKafkaCluster {
  layout: StackLayout;
  /** Bootstrap servers: every node's listener. */
  brokers: string[];
  nodes: KafkaNodeProcess[];
  /** The Connect worker's REST API. */
  connectUrl: string;
  connectPid(): number | undefined;
  /** The topics of the Connect worker's group (configs, offsets, status). */
  connectTopics: string[];
  /** kill -9 of one node; resolves once the process is gone. Returns its pid. */
  killNode(nodeId: number): Promise<number>;
  /** Starts a node again on its data (never formatted twice) and waits until the whole cluster lists it. */
  restartNode(nodeId: number): Promise<void>;
  /** Kills every process and removes the home. Tracked by the leak guard. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 180_000;

/** Launches a component and waits until it answers; its exit during start-up fails with its last log lines. */
export async function startComponent(component: Component): Promise<void> {
  await component.launch();
  const outcome = await waitFor(
    async () => (component.pid() === undefined ? 'exited' : (await component.healthy()) && 'healthy'),
    {
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 500,
      description: `${component.name} on port ${component.port} to be healthy (log: ${component.logFile})`,
    },
  );
  if (outcome === 'exited')
    throw new Error(`${component.name} exited during start-up; last log lines:\n${tailFile(component.logFile)}`);
}

export async function killHard(pid: number | undefined): Promise<void> {
  if (pid === undefined || !isAlive(pid)) return;
  process.kill(pid, 'SIGKILL');
  await waitFor(() => !isAlive(pid), {
    timeoutMs: 15_000,
    intervalMs: 100,
    description: `process ${pid} to be gone after SIGKILL`,
  });
}

/**
 * Starts `brokers` Kafka nodes (replication from the stack's settings: auto gives min(3, brokers)
 * replicas and one less in sync) and a Connect worker on them, each JVM with a small heap.
 */
export async function startKafkaCluster(
  prefix: string,
  options: { brokers: number; kafkaHeapMb: number; connectHeapMb: number },
): Promise<OwnKafkaCluster> {
  const shared = stackLayout();
  const name = uniqueName(prefix).toLowerCase();
  const home = mkdtempSync(join(tmpdir(), `stagefront-${name}-`));
  const base = await freePortRun(options.brokers * 2);
  let connectPort = await freePort();
  while (connectPort >= base && connectPort < base + options.brokers * 2) connectPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    STACK_HOME: home,
    STACK_DIST: shared.dist,
    STACK_KAFKA_BROKERS: String(options.brokers),
    STACK_KAFKA_REPLICATION_FACTOR: 'auto',
    STACK_KAFKA_MIN_INSYNC_REPLICAS: 'auto',
    STACK_KAFKA_PORT: String(base),
    STACK_KAFKA_CONTROLLER_PORT: String(base + 1),
    STACK_KAFKA_HEAP_MB: String(options.kafkaHeapMb),
    STACK_CONNECT_PORT: String(connectPort),
    STACK_CONNECT_HEAP_MB: String(options.connectHeapMb),
  };
  const layout = stackLayout(env);
  const nodes = kafkaComponents(layout);
  const storageTopicPrefix = `_${name}`;
  const connect = connectComponent(layout, { groupId: name, storageTopicPrefix });
  const stop = track(`Kafka cluster ${name}`, async () => {
    await killHard(connect.pid());
    await Promise.all(nodes.map((node) => killHard(node.pid())));
    rmSync(home, { recursive: true, force: true });
  });
  const node = (nodeId: number): Component => {
    const found = nodes[nodeId - 1];
    if (found === undefined) throw new Error(`the cluster has no node ${nodeId}`);
    return found;
  };
  try {
    await Promise.all(nodes.map(startComponent));
    await startComponent(connect);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    layout,
    brokers: stackEndpoints(layout).kafkaBrokers,
    nodes: nodes.map((component, i) => ({
      nodeId: i + 1,
      broker: `127.0.0.1:${component.port}`,
      pid: () => component.pid(),
    })),
    connectUrl: `http://127.0.0.1:${connectPort}`,
    connectPid: () => connect.pid(),
    connectTopics: ['configs', 'offsets', 'status'].map((kind) => `${storageTopicPrefix}-${kind}`),
    async killNode(nodeId) {
      const pid = node(nodeId).pid();
      if (pid === undefined) throw new Error(`node ${nodeId} is not running`);
      await killHard(pid);
      return pid;
    },
    restartNode: (nodeId) => startComponent(node(nodeId)),
    stop,
  };
}
