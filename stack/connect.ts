import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { distPaths } from './artifacts.js';
import type { Component } from './component.js';
import { httpGet, ownedPid } from './component.js';
import { basicAuthorization } from '../connectors/connect-client.js';
import { OUTBOX_CONNECTOR_FILE } from '../connectors/outbox-connector.js';
import { OFFSET_FLUSH_INTERVAL_MS } from '../connectors/slot-confirmation.js';
import {
  LOCAL_CONNECT_USER,
  LOCAL_ROLE_PASSWORDS,
  connectWorkerPorts,
  kafkaReplication,
  stackEndpoints,
  type StackLayout,
} from './config.js';
import { jvmPidFile, launchJvm, stopJvm } from './jvm.js';
import { KAFKA_CONNECT_USER } from '../lib/kafka-access.js';
import { javaClientProperties } from './kafka-security.js';
import { writePrivateFile } from './private-dir.js';

const POSTGRES_CONNECTOR_CLASS = 'io.debezium.connector.postgresql.PostgresConnector';

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
const LOCAL_CONNECT_SECRETS = { DEBEZIUM_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.debezium } as const;

export const STACK_CONNECT_CLUSTER: ConnectCluster = { groupId: 'stagefront-connect', storageTopicPrefix: '_connect' };

/** A user of the REST API: a line of the workers' REST users file. */
export interface ConnectRestUser {
  username: string;
  password: string;
}

/**
 * Kafka's basic-auth REST extension (the connect-basic-auth-extension jar, on the worker's
 * classpath): every request needs a user and password that the JAAS realm `KafkaConnect` accepts.
 * Two internal requests are exempt, the task configurations a follower sends the leader and the
 * fencing of zombie tasks (POST /connectors/<name>/tasks, PUT /connectors/<name>/fence): they are
 * signed with the cluster's session key instead (KIP-507). A user's request that a follower forwards
 * to the leader keeps its Authorization header, so every worker needs the same users.
 */
export const REST_AUTH_EXTENSION_CLASS =
  'org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension';

/** The JAAS login module that checks a user against a properties file of user: password lines. */
export const REST_LOGIN_MODULE_CLASS = 'org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule';

const WORKER_REST_AUTH_PROPERTIES: readonly string[] = [`rest.extension.classes=${REST_AUTH_EXTENSION_CLASS}`];

/** The jar in the Kafka classpath that holds the extension (stack/pom.xml fetches it). */
const restAuthExtensionJar = (layout: StackLayout) =>
  join(distPaths(layout).kafkaLibs, `connect-basic-auth-extension-${layout.versions.kafka}.jar`);

/**
 * The JAAS configuration the worker reads (java.security.auth.login.config): the realm
 * `KafkaConnect`, whose name the extension fixes, with the users file.
 */
export function restJaasConfig(usersFile: string): string {
  if (/["\\$]/.test(usersFile))
    throw new Error(
      `the Connect REST users file path ${usersFile} has a quote, backslash or $, which a JAAS file cannot hold as is: choose another STACK_HOME`,
    );
  return `KafkaConnect {\n  ${REST_LOGIN_MODULE_CLASS} required\n  file="${usersFile}";\n};\n`;
}

/** Escapes text for a Java properties file: a key escapes its separators too. */
function propertiesText(text: string, key: boolean): string {
  let out = text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
  out = key ? out.replace(/([=: #!])/g, '\\$1') : out.replace(/^ /, '\\ ');
  return out;
}

/**
 * The REST users file: one `user: password` line per user, Java properties syntax. No user or an
 * empty password is refused: the login module lets every request in when the file is empty.
 */
export function restUsersFile(users: readonly ConnectRestUser[]): string {
  if (users.length === 0)
    throw new Error('the Connect REST users file needs at least one user: an empty file lets every request in');
  for (const user of users) {
    if (user.username === '' || user.password === '')
      throw new Error('every Connect REST user needs a user name and a password');
  }
  return `${users.map((u) => `${propertiesText(u.username, true)}: ${propertiesText(u.password, false)}`).join('\n')}\n`;
}

/** Where a stack's workers keep their REST authentication (one pair of files for all its workers). */
export function restAuthFiles(layout: StackLayout) {
  const dir = join(layout.home, 'connect');
  return { jaas: join(dir, 'rest-jaas.conf'), users: join(dir, 'rest-users.properties') };
}

/**
 * Kafka Connect in distributed mode with the Debezium Postgres plugin on its plugin path. A
 * worker of another cluster (a test's own) passes its own `cluster` and a layout of its own.
 * `secretEnv` goes into the worker's environment only, where the env config provider reads it.
 * `worker` numbers the workers of one stack (STACK_CONNECT_WORKERS): the first is `connect` on
 * STACK_CONNECT_PORT, worker n is `connect-n` with a port, properties file, pid file and log of its own.
 * `restUsers` may call the REST API (the local stack's one user by default): the launcher writes
 * them and the JAAS file into the stack's connect/ folder, owner-only.
 */
export function connectComponent(
  layout: StackLayout,
  cluster: ConnectCluster = STACK_CONNECT_CLUSTER,
  secretEnv: Readonly<Record<(typeof CONNECT_SECRET_ENV)[number], string>> = LOCAL_CONNECT_SECRETS,
  worker = 1,
  restUsers: readonly ConnectRestUser[] = [LOCAL_CONNECT_USER],
): Component {
  const s = layout.settings;
  const name = worker === 1 ? 'connect' : `connect-${worker}`;
  const port = s.connectPort + worker - 1;
  const propertiesFile = join(
    layout.home,
    'connect',
    worker === 1 ? 'connect-distributed.properties' : `connect-distributed-${worker}.properties`,
  );
  const pidFile = jvmPidFile(layout, name);
  const auth = restAuthFiles(layout);
  const authFiles = (): [string, string][] => [
    [auth.users, restUsersFile(restUsers)],
    [auth.jaas, restJaasConfig(auth.users)],
  ];
  return {
    name,
    port,
    logFile: join(layout.logDir, `${name}.log`),
    // Further workers start after the first: JVM start-ups one at a time on a small machine.
    dependsOn: worker === 1 ? ['kafka'] : ['kafka', 'connect'],
    pid: () => ownedPid(pidFile, layout.home),
    async healthy() {
      const user = restUsers[0];
      const headers: Record<string, string> =
        user === undefined ? {} : { authorization: basicAuthorization(user.username, user.password) };
      const plugins = await httpGet(`http://127.0.0.1:${port}/connector-plugins`, 5000, headers);
      return plugins?.includes(POSTGRES_CONNECTOR_CLASS) ?? false;
    },
    async launch() {
      if (!existsSync(restAuthExtensionJar(layout))) {
        throw new Error(
          `the Connect worker needs Kafka's basic-auth REST extension, ${restAuthExtensionJar(layout)}, which is missing: npm run stack -- start fetches it (stack/pom.xml)`,
        );
      }
      mkdirSync(join(layout.home, 'connect'), { recursive: true });
      for (const [path, content] of authFiles()) writePrivateFile(path, content);
      // Owner-only: on a secured stack it holds the connect user's Kafka password.
      writePrivateFile(propertiesFile, workerProperties(layout, cluster, port));
      launchJvm(layout, {
        name,
        heapMb: s.connectHeapMb,
        classpath: `${distPaths(layout).kafkaLibs}/*`,
        mainClass: 'org.apache.kafka.connect.cli.ConnectDistributed',
        args: [propertiesFile],
        systemProperties: { 'java.security.auth.login.config': auth.jaas },
        env: { ...secretEnv },
      });
    },
    stop: () => stopJvm(ownedPid(pidFile, layout.home)),
    // A worker reads its users file once: another user list needs a restart, like other properties.
    outdated: () =>
      existsSync(propertiesFile) &&
      (readFileSync(propertiesFile, 'utf8') !== workerProperties(layout, cluster, port) ||
        authFiles().some(([path, content]) => !existsSync(path) || readFileSync(path, 'utf8') !== content)),
  };
}

/** The stack's Connect workers, STACK_CONNECT_WORKERS of them, all of one cluster. */
export function connectComponents(layout: StackLayout): Component[] {
  return connectWorkerPorts(layout.settings).map((_, i) =>
    connectComponent(layout, STACK_CONNECT_CLUSTER, LOCAL_CONNECT_SECRETS, i + 1),
  );
}

/** The producer settings the outbox connector file overrides (`producer.override.<setting>`), in file order. */
export function outboxProducerOverrides(file = OUTBOX_CONNECTOR_FILE): string[] {
  const prefix = 'producer.override.';
  const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  return Object.keys(config)
    .filter((key) => key.startsWith(prefix))
    .map((key) => key.slice(prefix.length));
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

/**
 * How soon the Connect group notices a worker that died: Kafka's 10 s session lowered to the
 * brokers' group.min.session.timeout.ms (6 s), a heartbeat every second: six intervals without one
 * before a live worker is taken for dead. Until the dead member's session ends, a rebalance waits
 * for it: a worker killed with -9 and started again (or a second worker taking its task over)
 * cannot start the task before then.
 */
const WORKER_GROUP_PROPERTIES: readonly string[] = ['session.timeout.ms=6000', 'heartbeat.interval.ms=1000'];

/** Every producer of the worker (the source tasks'): acknowledged by all in-sync replicas, idempotent. */
const WORKER_PRODUCER_PROPERTIES: readonly string[] = ['producer.acks=all', 'producer.enable.idempotence=true'];

/** The worker's connect-distributed.properties; storage topics at STACK_KAFKA_REPLICATION_FACTOR. */
export function workerProperties(
  layout: StackLayout,
  cluster: ConnectCluster = STACK_CONNECT_CLUSTER,
  port = layout.settings.connectPort,
): string {
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
    ...(cluster.pluginDiscovery === undefined
      ? PLUGIN_DISCOVERY_PROPERTIES
      : [`plugin.discovery=${cluster.pluginDiscovery}`]),
    `listeners=http://127.0.0.1:${port}`,
    'rest.advertised.host.name=127.0.0.1',
    `rest.advertised.port=${port}`,
    'topic.creation.enable=true',
    ...WORKER_SECURITY_PROPERTIES,
    ...WORKER_REST_AUTH_PROPERTIES,
    'scheduled.rebalance.max.delay.ms=0',
    ...WORKER_GROUP_PROPERTIES,
    '',
  ].join('\n');
}
