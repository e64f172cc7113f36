/**
 * A real Debezium Postgres connector on the stack's Kafka Connect, reading the slot-test cluster,
 * so the slot under test is held by a real reader.
 */
import { basicAuthorization } from '../../../connectors/connect-client.js';
import { createKafka } from '../../../lib/kafka.js';
import { waitFor } from '../../../lib/wait.js';
import { LOCAL_CONNECT_USER } from '../../../stack/config.js';
import { testLogger } from '../../support/seat-pipeline.js';
import { endpoints } from '../../support/stack.js';
import type { SlotCluster } from './slot-cluster.js';

export interface OutboxConnectorOptions {
  connectUrl: string;
  name: string;
  cluster: SlotCluster;
  database: string;
  slotName: string;
  publicationName: string;
  topicPrefix: string;
  /**
   * Let Connect create the outbox topic (one partition), so outbox rows reach Kafka and the slot's
   * position is confirmed; remove it with deleteOutboxTopic. Without it the events are never sent
   * (the stack's broker does not create topics) and the slot never moves.
   */
  createTopic?: boolean;
}

/** The topic the connector writes outbox rows to. */
function outboxTopic(topicPrefix: string): string {
  return `${topicPrefix}.public.outbox`;
}

/** Deletes the outbox topic a connector made with createTopic, if it exists. */
export async function deleteOutboxTopic(topicPrefix: string): Promise<void> {
  const admin = createKafka({
    brokers: endpoints().kafkaBrokers,
    clientId: 'slot-monitor-test',
    logger: testLogger,
  }).admin();
  await admin.connect();
  try {
    const topic = outboxTopic(topicPrefix);
    if ((await admin.listTopics()).includes(topic)) await admin.deleteTopics({ topics: [topic] });
  } finally {
    await admin.disconnect();
  }
}

async function connectRequest(url: string, method: string, body?: unknown): Promise<Response> {
  const response = await fetch(url, {
    method,
    headers: {
      'content-type': 'application/json',
      authorization: basicAuthorization(LOCAL_CONNECT_USER.username, LOCAL_CONNECT_USER.password),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok && response.status !== 404)
    throw new Error(`${method} ${url} answered ${response.status}: ${await response.text()}`);
  return response;
}

/** Creates the connector (pgoutput, existing publication on the outbox, no snapshot). */
export async function createOutboxConnector(options: OutboxConnectorOptions): Promise<void> {
  await connectRequest(`${options.connectUrl}/connectors/${options.name}/config`, 'PUT', {
    'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
    'tasks.max': '1',
    'database.hostname': '127.0.0.1',
    'database.port': String(options.cluster.port),
    'database.user': 'postgres',
    'database.password': 'postgres',
    'database.dbname': options.database,
    'topic.prefix': options.topicPrefix,
    'plugin.name': 'pgoutput',
    'slot.name': options.slotName,
    'publication.name': options.publicationName,
    'publication.autocreate.mode': 'disabled',
    'table.include.list': 'public.outbox',
    'snapshot.mode': 'no_data',
    ...(options.createTopic
      ? { 'topic.creation.default.partitions': '1', 'topic.creation.default.replication.factor': '-1' }
      : {}),
  });
}

/** PUT /stop shuts the tasks down (pause would keep the replication connection, and the slot, active). */
export async function stopConnector(connectUrl: string, name: string): Promise<void> {
  await connectRequest(`${connectUrl}/connectors/${name}/stop`, 'PUT');
}

/** PUT /resume starts a stopped (or paused) connector's tasks again, from its committed offsets. */
export async function resumeConnector(connectUrl: string, name: string): Promise<void> {
  await connectRequest(`${connectUrl}/connectors/${name}/resume`, 'PUT');
}

export async function deleteConnector(connectUrl: string, name: string): Promise<void> {
  await connectRequest(`${connectUrl}/connectors/${name}`, 'DELETE');
}

export async function waitForSlotActive(cluster: SlotCluster, slotName: string, active: boolean): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await cluster.admin(/* sql */ `select active from pg_replication_slots where slot_name = $1`, [
        slotName,
      ]);
      return (rows[0] as { active: boolean } | undefined)?.active === active;
    },
    { timeoutMs: 90_000, intervalMs: 250, description: `slot ${slotName} to be ${active ? 'active' : 'inactive'}` },
  );
}
