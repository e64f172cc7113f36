/**
 * A real Debezium Postgres connector on the stack's Kafka Connect, reading the slot-test cluster,
 * so the slot under test is held by a real reader.
 */
import { waitFor } from '../../../lib/wait.js';
import type { SlotCluster } from './slot-cluster.js';

export interface OutboxConnectorOptions {
  connectUrl: string;
  name: string;
  cluster: SlotCluster;
  database: string;
  slotName: string;
  publicationName: string;
  topicPrefix: string;
}

async function connectRequest(url: string, method: string, body?: unknown): Promise<Response> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok && response.status !== 404) throw new Error(`${method} ${url} answered ${response.status}: ${await response.text()}`);
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
  });
}

/** PUT /stop shuts the tasks down (pause would keep the replication connection, and the slot, active). */
export async function stopConnector(connectUrl: string, name: string): Promise<void> {
  await connectRequest(`${connectUrl}/connectors/${name}/stop`, 'PUT');
}

export async function deleteConnector(connectUrl: string, name: string): Promise<void> {
  await connectRequest(`${connectUrl}/connectors/${name}`, 'DELETE');
}

export async function waitForSlotActive(cluster: SlotCluster, slotName: string, active: boolean): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await cluster.admin(/* sql */ `select active from pg_replication_slots where slot_name = $1`, [slotName]);
      return (rows[0] as { active: boolean } | undefined)?.active === active;
    },
    { timeoutMs: 90_000, intervalMs: 250, description: `slot ${slotName} to be ${active ? 'active' : 'inactive'}` },
  );
}
