import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from '../lib/kafka.js';
import { distPaths } from './artifacts.js';
import type { Component } from './component.js';
import { ownedPid } from './component.js';
import { type KafkaNode, type StackLayout, kafkaNodes, kafkaReplication } from './config.js';
import { jvmPidFile, launchJvm, stopJvm } from './jvm.js';
import {
  applyAcls,
  checkFormattedSecurity,
  ensureKafkaTls,
  formatMarker,
  kafkaSecured,
  scramFormatArguments,
  securedServerProperties,
  stackKafkaClientOptions,
} from './kafka-security.js';
import { writePrivateFile } from './private-dir.js';
import { stackKafkaAccessPlan } from './kafka-users.js';
import { runCommand } from './processes.js';

/**
 * The stack's Kafka: STACK_KAFKA_BROKERS nodes in KRaft mode, each a broker and a controller in one
 * process, every controller a voter (a quorum of three survives one node down).
 */
export function kafkaComponents(layout: StackLayout): Component[] {
  return kafkaNodes(layout).map((node) => kafkaComponent(layout, node));
}

/** One node; `node` defaults to node 1, the whole of a single-node stack. */
export function kafkaComponent(layout: StackLayout, node: KafkaNode = firstNode(layout)): Component {
  const propertiesFile = join(node.home, 'server.properties');
  const classpath = `${distPaths(layout).kafkaLibs}/*`;
  const pidFile = jvmPidFile(layout, node.name);
  const nodes = kafkaNodes(layout);
  return {
    name: node.name,
    port: node.port,
    logFile: join(layout.logDir, `${node.name}.log`),
    dependsOn: [],
    pid: () => ownedPid(pidFile, layout.home),
    // Healthy once the whole cluster has registered: Connect, which waits for this, creates its topics at the full replication factor.
    // Secured: as the admin user, and the access plan's ACLs are in place (created idempotently).
    healthy: () => answersMetadata(layout, `127.0.0.1:${node.port}`, nodes.length),
    async launch() {
      mkdirSync(node.home, { recursive: true });
      checkFormattedSecurity(layout, node.dataDir);
      if (kafkaSecured(layout)) {
        ensureKafkaTls(layout);
        // It holds the inter-broker password.
        writePrivateFile(propertiesFile, serverProperties(layout, node));
      } else {
        writeFileSync(propertiesFile, serverProperties(layout, node));
      }
      formatStorage(layout, node, classpath, propertiesFile);
      launchJvm(layout, {
        name: node.name,
        heapMb: layout.settings.kafkaHeapMb,
        classpath,
        mainClass: 'kafka.Kafka',
        args: [propertiesFile],
      });
    },
    stop: () => stopJvm(ownedPid(pidFile, layout.home)),
  };
}

function firstNode(layout: StackLayout): KafkaNode {
  const [first] = kafkaNodes(layout);
  if (first === undefined) throw new Error('STACK_KAFKA_BROKERS must be at least 1');
  return first;
}

/**
 * How soon the controller gives up on a broker that stopped heartbeating. A node killed with -9 and
 * started again cannot register until its old incarnation's session has expired
 * (DUPLICATE_BROKER_REGISTRATION): with Kafka's 9 s default that wait was 8 of the 13.6 s from a
 * restart to a broker that serves. In a cluster the same session is how long a dead broker keeps
 * its partitions' leadership. A heartbeat every 500 ms: six intervals without one before a live
 * broker is taken for dead.
 */
export const BROKER_SESSION_PROPERTIES: readonly string[] = [
  'broker.heartbeat.interval.ms=500',
  'broker.session.timeout.ms=3000',
];

/** A node's server.properties: replication of every topic from STACK_KAFKA_REPLICATION_FACTOR and STACK_KAFKA_MIN_INSYNC_REPLICAS. */
export function serverProperties(layout: StackLayout, node: KafkaNode = firstNode(layout)): string {
  const { replicationFactor, minInsyncReplicas } = kafkaReplication(layout.settings);
  const voters = kafkaNodes(layout)
    .map((n) => `${n.nodeId}@127.0.0.1:${n.controllerPort}`)
    .join(',');
  const listeners = kafkaSecured(layout)
    ? securedServerProperties(layout, node.port, node.controllerPort)
    : [
        `listeners=PLAINTEXT://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort}`,
        `advertised.listeners=PLAINTEXT://127.0.0.1:${node.port}`,
        'controller.listener.names=CONTROLLER',
        'inter.broker.listener.name=PLAINTEXT',
        'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      ];
  return [
    'process.roles=broker,controller',
    `node.id=${node.nodeId}`,
    `controller.quorum.voters=${voters}`,
    ...listeners,
    `log.dirs=${node.dataDir}`,
    'num.partitions=3',
    'auto.create.topics.enable=false',
    `default.replication.factor=${replicationFactor}`,
    `min.insync.replicas=${minInsyncReplicas}`,
    `offsets.topic.replication.factor=${replicationFactor}`,
    `transaction.state.log.replication.factor=${replicationFactor}`,
    `transaction.state.log.min.isr=${minInsyncReplicas}`,
    `share.coordinator.state.topic.replication.factor=${replicationFactor}`,
    `share.coordinator.state.topic.min.isr=${minInsyncReplicas}`,
    'group.initial.rebalance.delay.ms=0',
    ...BROKER_SESSION_PROPERTIES,
    'log.retention.hours=168',
    '',
  ].join('\n');
}

/**
 * Formats a node's KRaft storage on its first start only (meta.properties present means
 * formatted). Every node of a cluster gets the same cluster id, kept in the stack's home.
 */
function formatStorage(layout: StackLayout, node: KafkaNode, classpath: string, propertiesFile: string): void {
  if (existsSync(join(node.dataDir, 'meta.properties'))) return;
  const args = [
    `-Dlog4j2.configurationFile=${join(layout.home, 'log4j2.properties')}`,
    '-cp',
    classpath,
    'kafka.tools.StorageTool',
    'format',
    `--cluster-id=${clusterId(layout)}`,
    '--config',
    propertiesFile,
    '--ignore-formatted',
  ];
  if (!kafkaSecured(layout)) {
    runCommand('java', args);
    return;
  }
  // The SCRAM users' passwords go through an owner-only argument file that the java launcher
  // reads itself: the process's command line shows only the file's name.
  const argFile = join(node.home, 'format.args');
  writePrivateFile(
    argFile,
    [...args, ...scramFormatArguments()]
      .map((a) => `"${a.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`)
      .join('\n'),
  );
  try {
    runCommand('java', [`@${argFile}`]);
  } finally {
    rmSync(argFile, { force: true });
  }
  writeFileSync(formatMarker(node.dataDir), 'sasl_ssl\n');
}

function clusterId(layout: StackLayout): string {
  if (layout.settings.kafkaBrokerCount === 1) return randomBytes(16).toString('base64url');
  const file = join(layout.home, 'kafka-cluster-id');
  if (!existsSync(file)) writeFileSync(file, randomBytes(16).toString('base64url'));
  return readFileSync(file, 'utf8').trim();
}

/**
 * The broker answers metadata requests and the cluster lists at least `brokers` brokers; on a
 * secured stack it answers the admin user, and the access plan's ACLs are created.
 */
async function answersMetadata(layout: StackLayout, broker: string, brokers: number): Promise<boolean> {
  const admin = new Kafka({
    clientId: 'stack-health',
    brokers: [broker],
    connectionTimeout: 1500,
    requestTimeout: 3000,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
    ...stackKafkaClientOptions(layout),
  }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    if (cluster.brokers.length < brokers) return false;
    if (kafkaSecured(layout)) await applyAcls(admin, stackKafkaAccessPlan());
    return true;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
