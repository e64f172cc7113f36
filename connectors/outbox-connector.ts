import { readFileSync } from 'node:fs';
import type { AggregateType } from '../events/catalogue.js';
import { EVENTS, topicFor } from '../events/catalogue.js';
import { createKafka, ensureTopics } from '../lib/kafka.js';
import { kafkaClientSecurity } from '../lib/kafka-security.js';
import { PipelineError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import type { Config } from '../lib/settings.js';
import {
  putConnectorConfig,
  validateConnectorConfig,
  waitUntilRunning,
  type ConnectorStatus,
} from './connect-client.js';
import type { connectorSettings } from './settings.js';
import { besideModule } from '../lib/source-tree.js';

export type ConnectorConfig = Config<typeof connectorSettings.settings>;

export const OUTBOX_CONNECTOR_FILE = besideModule(import.meta.url, 'seat-outbox.json');

/** The file's ${UPPER_CASE} placeholders and the settings that fill them. */
function placeholderValues(config: ConnectorConfig): Record<string, string> {
  return {
    SEAT_DB_HOST: config.seatDbHost,
    SEAT_DB_PORT: String(config.seatDbPort),
    SEAT_DB_NAME: config.seatDbName,
    DEBEZIUM_DB_USER: config.debeziumUser,
    DEBEZIUM_DB_PASSWORD_REFERENCE: config.debeziumPasswordReference,
    SLOT_NAME: config.slotName,
    PUBLICATION_NAME: config.publicationName,
    TOPIC_PREFIX: config.topicPrefix,
    TOPIC_PARTITIONS: String(config.topicPartitions),
    TOPIC_REPLICATION_FACTOR: String(config.topicReplicationFactor),
    HEARTBEAT_INTERVAL_MS: String(config.heartbeatIntervalMs),
  };
}

/**
 * Reads the connector configuration file (shared by the native stack and docker compose) and fills
 * its ${UPPER_CASE} placeholders. Lower-case ones (${routedByValue}) belong to Debezium and stay.
 */
export function renderOutboxConnector(config: ConnectorConfig, file = OUTBOX_CONNECTOR_FILE): Record<string, string> {
  const values = placeholderValues(config);
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  const rendered: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    rendered[key] = value.replace(/\$\{([A-Z][A-Z0-9_]*)\}/g, (_match, name: string) => {
      const replacement = values[name];
      if (replacement === undefined) throw new Error(`${file}: ${key} uses \${${name}}, which no setting provides`);
      return replacement;
    });
  }
  // A failover slot follows the seat database to its standby (Postgres 17+): see CONNECTOR_SLOT_FAILOVER.
  if (config.slotFailover) rendered['slot.failover'] = 'true';
  return rendered;
}

function passwordHint(config: ConnectorConfig): string {
  return (
    `Connect resolves database.password from ${config.debeziumPasswordReference}: the worker must have the password of ${config.debeziumUser} there ` +
    "(the native stack puts DEBEZIUM_DB_PASSWORD in its Connect worker's environment; npm run stack -- start restarts a worker started before that), " +
    'and its provider must be configured and allowed to read it (config.providers, allowlist.pattern).'
  );
}

/** The event topics, one per aggregate type (consumers create their dead letter topics themselves). */
export function outboxTopics(prefix: string): string[] {
  const aggregates = [...new Set(Object.values(EVENTS).map((e) => e.aggregateType))] as AggregateType[];
  return aggregates.map((a) => topicFor(prefix, a));
}

/**
 * Creates the topics (so consumers can subscribe before the first event), validates the
 * configuration, creates or updates the connector, and waits until it and its task run.
 */
export async function applyOutboxConnector(config: ConnectorConfig, logger: Logger): Promise<ConnectorStatus> {
  const kafka = createKafka({
    brokers: config.kafkaBrokers,
    clientId: 'connector-command',
    logger,
    security: kafkaClientSecurity('connector', config),
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureTopics(
      admin,
      outboxTopics(config.topicPrefix).map((topic) => ({
        topic,
        numPartitions: config.topicPartitions,
        replicationFactor: config.topicReplicationFactor,
      })),
    );
  } finally {
    await admin.disconnect();
  }
  const rendered = renderOutboxConnector(config);
  const problems = await validateConnectorConfig(config, { name: config.connectorName, ...rendered });
  if (problems.length > 0) {
    const hint = problems.some((p) => p.includes('password authentication failed')) ? `\n${passwordHint(config)}` : '';
    throw new PipelineError(
      'connector_config_refused',
      `Connect refused the configuration of ${config.connectorName}:\n  ${problems.join('\n  ')}${hint}`,
      {
        details: { problems },
      },
    );
  }
  await putConnectorConfig(config, config.connectorName, rendered);
  const status = await waitUntilRunning(config, config.connectorName, config.readyTimeoutMs);
  logger.info(
    { connector: config.connectorName, slot: config.slotName, topics: outboxTopics(config.topicPrefix) },
    'connector running',
  );
  return status;
}

/**
 * What a cluster of three brokers changes in the file's rendering, and nothing else: a topic
 * Connect creates gets three replicas, written out like every other topic there (the default
 * rendering, -1, would take the brokers' default.replication.factor, also three there).
 */
export const KUBERNETES_CONNECTOR_OVERRIDES: Readonly<Record<string, string>> = {
  'topic.creation.default.replication.factor': '3',
};

/**
 * Strimzi's API: v1 is the only one served by the Strimzi releases that run Kafka 4.3 (1.2.0 and
 * later; 1.0.0 removed v1beta2).
 */
export const STRIMZI_API_VERSION = 'kafka.strimzi.io/v1';

/** The Strimzi label that names the KafkaConnect cluster a KafkaConnector runs on. */
const STRIMZI_CLUSTER_LABEL = 'strimzi.io/cluster';

/** The KafkaConnect resource of deploy/kubernetes/ (`render --kubernetes` targets it unless told another). */
export const KUBERNETES_CONNECT_CLUSTER = 'stagefront-connect';

/**
 * The outbox connector as a Strimzi KafkaConnector resource: the same rendering as `render` (and
 * `apply`), with `connector.class` and `tasks.max` moved to the resource's own fields and
 * KUBERNETES_CONNECTOR_OVERRIDES applied. Namespace-neutral; `connectCluster` is the KafkaConnect's name.
 */
export function renderOutboxKafkaConnector(
  config: ConnectorConfig,
  connectCluster = KUBERNETES_CONNECT_CLUSTER,
  file = OUTBOX_CONNECTOR_FILE,
) {
  const { 'connector.class': connectorClass, 'tasks.max': tasksMax, ...rest } = renderOutboxConnector(config, file);
  if (connectorClass === undefined || tasksMax === undefined)
    throw new Error(`${file}: connector.class and tasks.max are required`);
  return {
    apiVersion: STRIMZI_API_VERSION,
    kind: 'KafkaConnector',
    metadata: { name: config.connectorName, labels: { [STRIMZI_CLUSTER_LABEL]: connectCluster } },
    spec: { class: connectorClass, tasksMax: Number(tasksMax), config: { ...rest, ...KUBERNETES_CONNECTOR_OVERRIDES } },
  };
}
