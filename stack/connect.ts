import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { distPaths } from './artifacts.js';
import type { Component } from './component.js';
import { httpGet, ownedPid } from './component.js';
import { OUTBOX_CONNECTOR_FILE } from '../connectors/outbox-connector.js';
import { OFFSET_FLUSH_INTERVAL_MS } from '../connectors/slot-confirmation.js';
import { LOCAL_ROLE_PASSWORDS, connectWorkerPorts, kafkaReplication, stackEndpoints, type StackLayout } from './config.js';
import { jvmPidFile, launchJvm, stopJvm } from './jvm.js';
import { KAFKA_CONNECT_USER } from '../lib/kafka-access.js';
import { javaClientProperties, writePrivateFile } from './kafka-security.js';

export const POSTGRES_CONNECTOR_CLASS = 'io.debezium.connector.postgresql.PostgresConnector';

/** The Connect cluster a worker joins: its group and the prefix of its config, offset and status topics. */
export interface ConnectCluster {
  groupId: string;
  storageTopicPrefix: string;
  /** Only to measure the old way against the new (the bench): a plugin.discovery other than service_load. */
  pluginDiscovery?: 'hybrid_warn';
}

/** Variables of the worker's environment that connector configurations may read (`${env:NAME}`). */
export const CONNECT_SECRET_ENV = ['DEBEZIUM_DB_PASSWORD'] as const;

/** The local stack's values of those variables, passed to its worker by the launcher. */
export const LOCAL_CONNECT_SECRETS = { DEBEZIUM_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.debezium } as const;

export const STACK_CONNECT_CLUSTER: ConnectCluster = { groupId: 'stagefront-connect', storageTopicPrefix: '_connect' };

/**
 * Kafka Connect in distributed mode with the Debezium Postgres plugin on its plugin path. A
 * worker of another cluster (a test's own) passes its own `cluster` and a layout of its own.
 * `secretEnv` goes into the worker's environment only, where the env config provider reads it.
 * `worker` numbers the workers of one stack (STACK_CONNECT_WORKERS): the first is `connect` on
 * STACK_CONNECT_PORT, worker n is `connect-n` with a port, properties file, pid file and log of its own.
 */
export function connectComponent(
  layout: StackLayout,
  cluster: ConnectCluster = STACK_CONNECT_CLUSTER,
  secretEnv: Readonly<Record<(typeof CONNECT_SECRET_ENV)[number], string>> = LOCAL_CONNECT_SECRETS,
  worker = 1,
): Component {
  const s = layout.settings;
  const name = worker === 1 ? 'connect' : `connect-${worker}`;
  const port = s.connectPort + worker - 1;
  const propertiesFile = join(layout.home, 'connect', worker === 1 ? 'connect-distributed.properties' : `connect-distributed-${worker}.properties`);
  const pidFile = jvmPidFile(layout, name);
  return {
    name,
    port,
    logFile: join(layout.logDir, `${name}.log`),
    // Further workers start after the first: JVM start-ups one at a time on a small machine.
    dependsOn: worker === 1 ? ['kafka'] : ['kafka', 'connect'],
    pid: () => ownedPid(pidFile, layout.home),
    async healthy() {
      const plugins = await httpGet(`http://127.0.0.1:${port}/connector-plugins`);
      return plugins?.includes(POSTGRES_CONNECTOR_CLASS) ?? false;
    },
    async launch() {
      mkdirSync(join(layout.home, 'connect'), { recursive: true });
      // Owner-only: on a secured stack it holds the connect user's Kafka password.
      writePrivateFile(propertiesFile, workerProperties(layout, cluster, port));
      launchJvm(layout, {
        name,
        heapMb: s.connectHeapMb,
        classpath: `${distPaths(layout).kafkaLibs}/*`,
        mainClass: 'org.apache.kafka.connect.cli.ConnectDistributed',
        args: [propertiesFile],
        env: { ...secretEnv },
      });
    },
    stop: () => stopJvm(ownedPid(pidFile, layout.home)),
    outdated: () => existsSync(propertiesFile) && readFileSync(propertiesFile, 'utf8') !== workerProperties(layout, cluster, port),
  };
}

/** The stack's Connect workers, STACK_CONNECT_WORKERS of them, all of one cluster. */
export function connectComponents(layout: StackLayout): Component[] {
  return connectWorkerPorts(layout.settings).map((_, i) => connectComponent(layout, STACK_CONNECT_CLUSTER, LOCAL_CONNECT_SECRETS, i + 1));
}

/** The producer settings the outbox connector file overrides (`producer.override.<setting>`), in file order. */
export function outboxProducerOverrides(file = OUTBOX_CONNECTOR_FILE): string[] {
  const prefix = 'producer.override.';
  const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  return Object.keys(config).filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length));
}

/**
 * What a connector configuration may take from the worker, the same in docker-compose.yml:
 * - Its secrets, through the env config provider: the connector holds `${env:DEBEZIUM_DB_PASSWORD}`
 *   and Connect resolves it when it starts the task, so the password is in neither Connect's config
 *   topic nor `GET /connectors/<name>/config`. The allowlist keeps every other variable of the
 *   worker's environment out of reach of a connector configuration.
 * - Client overrides: Kafka's default policy (All) lets a connector configuration override any
 *   producer, consumer or admin setting of its clients, credentials included; the worker allows
 *   exactly the producer settings the outbox connector overrides (its `producer.override.*` keys).
 */
export const WORKER_SECURITY_PROPERTIES: readonly string[] = [
  'config.providers=env',
  'config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider',
  `config.providers.env.param.allowlist.pattern=${CONNECT_SECRET_ENV.join('|')}`,
  'connector.client.config.override.policy=Allowlist',
  `connector.client.config.override.allowlist=${outboxProducerOverrides().join(',')}`,
];

/**
 * How the worker finds its plugins. Kafka's default (hybrid_warn) also scans every class of every
 * plugin jar by reflection at each start, which took most of a restart under load; service_load
 * reads the jars' META-INF/services manifests only. Every class the outbox connector and this
 * worker use has one (the Debezium connector, EventRouter, BinaryDataConverter, Kafka's Filter,
 * TopicNameMatches and converters, the env config provider, the override policy): a class
 * without one would be missing from GET /connector-plugins and the connector would fail to validate.
 */
export const PLUGIN_DISCOVERY_PROPERTIES: readonly string[] = ['plugin.discovery=service_load'];

/** Every producer of the worker (the source tasks'): acknowledged by all in-sync replicas, idempotent. */
export const WORKER_PRODUCER_PROPERTIES: readonly string[] = ['producer.acks=all', 'producer.enable.idempotence=true'];

/** The worker's connect-distributed.properties; storage topics at STACK_KAFKA_REPLICATION_FACTOR. */
export function workerProperties(layout: StackLayout, cluster: ConnectCluster = STACK_CONNECT_CLUSTER, port = layout.settings.connectPort): string {
  const s = layout.settings;
  const { replicationFactor } = kafkaReplication(s);
  return [
    `bootstrap.servers=${stackEndpoints(layout).kafkaBrokers.join(',')}`,
    // STACK_KAFKA_SECURITY=sasl_ssl: the worker and its producers, consumers and admin clients are the connect user.
    ...javaClientProperties(layout, KAFKA_CONNECT_USER, ['producer.', 'consumer.', 'admin.']),
    `group.id=${cluster.groupId}`,
    `config.storage.topic=${cluster.storageTopicPrefix}-configs`,
    `offset.storage.topic=${cluster.storageTopicPrefix}-offsets`,
    `status.storage.topic=${cluster.storageTopicPrefix}-status`,
    `config.storage.replication.factor=${replicationFactor}`,
    `offset.storage.replication.factor=${replicationFactor}`,
    `status.storage.replication.factor=${replicationFactor}`,
    // Connect's source producers already use acks=all (one request in flight, retried without end);
    // idempotence, off by default for them, keeps a retried batch from being written twice.
    ...WORKER_PRODUCER_PROPERTIES,
    'key.converter=org.apache.kafka.connect.json.JsonConverter',
    'value.converter=org.apache.kafka.connect.json.JsonConverter',
    // The slot advances only when offsets are flushed: flush often so retained WAL stays small.
    `offset.flush.interval.ms=${OFFSET_FLUSH_INTERVAL_MS}`,
    `plugin.path=${distPaths(layout).connectPlugins}`,
    ...(cluster.pluginDiscovery === undefined ? PLUGIN_DISCOVERY_PROPERTIES : [`plugin.discovery=${cluster.pluginDiscovery}`]),
    `listeners=http://127.0.0.1:${port}`,
    'rest.advertised.host.name=127.0.0.1',
    `rest.advertised.port=${port}`,
    'topic.creation.enable=true',
    ...WORKER_SECURITY_PROPERTIES,
    'scheduled.rebalance.max.delay.ms=0',
    '',
  ].join('\n');
}
