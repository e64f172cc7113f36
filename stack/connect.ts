import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { distPaths } from './artifacts.js';
import type { Component } from './component.js';
import { httpGet, ownedPid } from './component.js';
import type { StackLayout } from './config.js';
import { jvmPidFile, launchJvm, stopJvm } from './jvm.js';

export const POSTGRES_CONNECTOR_CLASS = 'io.debezium.connector.postgresql.PostgresConnector';

/** The Connect cluster a worker joins: its group and the prefix of its config, offset and status topics. */
export interface ConnectCluster {
  groupId: string;
  storageTopicPrefix: string;
}

export const STACK_CONNECT_CLUSTER: ConnectCluster = { groupId: 'stagefront-connect', storageTopicPrefix: '_connect' };

/**
 * Kafka Connect in distributed mode with the Debezium Postgres plugin on its plugin path. A
 * worker of another cluster (a test's own) passes its own `cluster` and a layout of its own.
 */
export function connectComponent(layout: StackLayout, cluster: ConnectCluster = STACK_CONNECT_CLUSTER): Component {
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
      });
    },
    stop: () => stopJvm(ownedPid(pidFile, layout.home)),
  };
}

function workerProperties(layout: StackLayout, cluster: ConnectCluster): string {
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
    'offset.flush.interval.ms=5000',
    `plugin.path=${distPaths(layout).connectPlugins}`,
    `listeners=http://127.0.0.1:${s.connectPort}`,
    'rest.advertised.host.name=127.0.0.1',
    `rest.advertised.port=${s.connectPort}`,
    'topic.creation.enable=true',
    // Connector configurations may read ${env:NAME} from the worker's environment.
    'config.providers=env',
    'config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider',
    'scheduled.rebalance.max.delay.ms=0',
    '',
  ].join('\n');
}
