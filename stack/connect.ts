import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { distPaths } from './artifacts.js';
import type { Component } from './component.js';
import { httpGet, ownedPid } from './component.js';
import { OUTBOX_CONNECTOR_FILE } from '../connectors/outbox-connector.js';
import { OFFSET_FLUSH_INTERVAL_MS } from '../connectors/slot-confirmation.js';
import { LOCAL_ROLE_PASSWORDS, type StackLayout } from './config.js';
import { jvmPidFile, launchJvm, stopJvm } from './jvm.js';

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
 */
export function connectComponent(
  layout: StackLayout,
  cluster: ConnectCluster = STACK_CONNECT_CLUSTER,
  secretEnv: Readonly<Record<(typeof CONNECT_SECRET_ENV)[number], string>> = LOCAL_CONNECT_SECRETS,
): Component {
  const s = layout.settings;
  const propertiesFile = join(layout.home, 'connect', 'connect-distributed.properties');
  const pidFile = jvmPidFile(layout, 'connect');
  return {
    name: 'connect',
    port: s.connectPort,
    logFile: join(layout.logDir, 'connect.log'),
    dependsOn: ['kafka'],
    pid: () => ownedPid(pidFile, layout.home),
    async healthy() {
      const plugins = await httpGet(`http://127.0.0.1:${s.connectPort}/connector-plugins`);
      return plugins?.includes(POSTGRES_CONNECTOR_CLASS) ?? false;
    },
    async launch() {
      mkdirSync(join(layout.home, 'connect'), { recursive: true });
      writeFileSync(propertiesFile, workerProperties(layout, cluster));
      launchJvm(layout, {
        name: 'connect',
        heapMb: s.connectHeapMb,
        classpath: `${distPaths(layout).kafkaLibs}/*`,
        mainClass: 'org.apache.kafka.connect.cli.ConnectDistributed',
        args: [propertiesFile],
        env: { ...secretEnv },
      });
    },
    stop: () => stopJvm(ownedPid(pidFile, layout.home)),
    outdated: () => existsSync(propertiesFile) && readFileSync(propertiesFile, 'utf8') !== workerProperties(layout, cluster),
  };
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

/** The worker's connect-distributed.properties. */
export function workerProperties(layout: StackLayout, cluster: ConnectCluster = STACK_CONNECT_CLUSTER): string {
  const s = layout.settings;
  return [
    `bootstrap.servers=127.0.0.1:${s.kafkaPort}`,
    `group.id=${cluster.groupId}`,
    `config.storage.topic=${cluster.storageTopicPrefix}-configs`,
    `offset.storage.topic=${cluster.storageTopicPrefix}-offsets`,
    `status.storage.topic=${cluster.storageTopicPrefix}-status`,
    'config.storage.replication.factor=1',
    'offset.storage.replication.factor=1',
    'status.storage.replication.factor=1',
    'key.converter=org.apache.kafka.connect.json.JsonConverter',
    'value.converter=org.apache.kafka.connect.json.JsonConverter',
    // The slot advances only when offsets are flushed: flush often so retained WAL stays small.
    `offset.flush.interval.ms=${OFFSET_FLUSH_INTERVAL_MS}`,
    `plugin.path=${distPaths(layout).connectPlugins}`,
    ...(cluster.pluginDiscovery === undefined ? PLUGIN_DISCOVERY_PROPERTIES : [`plugin.discovery=${cluster.pluginDiscovery}`]),
    `listeners=http://127.0.0.1:${s.connectPort}`,
    'rest.advertised.host.name=127.0.0.1',
    `rest.advertised.port=${s.connectPort}`,
    'topic.creation.enable=true',
    ...WORKER_SECURITY_PROPERTIES,
    'scheduled.rebalance.max.delay.ms=0',
    '',
  ].join('\n');
}
