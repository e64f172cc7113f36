/**
 * The bench's seat pipeline: a seat database of its own (migrated, with the service and Debezium
 * roles), its outbox connector on a Connect worker (the shared one unless told), and the seat
 * service's event writer, on the stack's local passwords.
 */
import { connectFetch, connectorStatus, deleteConnector } from '../connectors/connect-client.js';
import { type ConnectorConfig, applyOutboxConnector } from '../connectors/outbox-connector.js';
import { connectorSettings } from '../connectors/settings.js';
import { topicFor } from '../events/catalogue.js';
import { createPool } from '../lib/postgres.js';
import { parseSettings } from '../lib/settings.js';
import { waitFor } from '../lib/wait.js';
import { migrateSeatDatabase, setupRoles } from '../seat-service/database-setup.js';
import { type SeatService, openSeatService } from '../seat-service/service.js';
import { seatServiceSettings } from '../seat-service/settings.js';
import { LOCAL_CONNECT_ENV, LOCAL_ROLE_PASSWORDS } from '../stack/config.js';
import { type BenchContext, adminSql, freshDatabase } from './context.js';

export interface BenchSeatPipeline {
  connector: ConnectorConfig;
  /** The seat database, as the superuser. */
  databaseUrl: string;
  service: SeatService;
  topics: { seat: string; order: string };
  /** Pauses the connector (its slot keeps the WAL) and waits until it is paused. */
  pause(): Promise<void>;
  /** Resumes it and waits until its task runs. */
  resume(): Promise<void>;
  teardown(): Promise<void>;
}

async function setState(
  ctx: BenchContext,
  connector: ConnectorConfig,
  action: 'pause' | 'resume',
  state: string,
): Promise<void> {
  const response = await connectFetch(
    connector,
    `/connectors/${encodeURIComponent(connector.connectorName)}/${action}`,
    { method: 'PUT' },
  );
  if (!response.ok)
    throw new Error(`${action} ${connector.connectorName}: HTTP ${response.status} ${await response.text()}`);
  await waitFor(
    async () => {
      const status = await connectorStatus(connector, connector.connectorName);
      return status?.connector.state === state && status.tasks.every((t) => t.state === state);
    },
    { timeoutMs: 60_000, intervalMs: 100, description: `connector ${connector.connectorName} ${state}` },
  );
  ctx.logger.info({ connector: connector.connectorName, state }, 'connector state');
}

/** A seat database of the bench's own (migrated, with the service and Debezium roles) and the seat service on it. */
export async function openBenchSeatDatabase(
  ctx: BenchContext,
  label: string,
): Promise<{ name: string; url: string; service: SeatService; drop: () => Promise<void> }> {
  const database = await freshDatabase(ctx, label);
  const adminPool = createPool({
    connectionString: database.url,
    applicationName: 'bench-migrate',
    logger: ctx.logger,
    max: 1,
  });
  try {
    await migrateSeatDatabase(adminPool, ctx.logger);
    await setupRoles(adminPool, LOCAL_ROLE_PASSWORDS);
  } finally {
    await adminPool.end();
  }
  const service = await openSeatService(
    parseSettings(seatServiceSettings, {
      SEAT_DB_URL: database.url.replace('postgres:postgres@', `stagefront_service:${LOCAL_ROLE_PASSWORDS.service}@`),
      SEAT_DB_ADMIN_URL: database.url,
      SCHEMA_REGISTRY_URL: ctx.stack.registryUrl,
      SEAT_SERVICE_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.service,
      DEBEZIUM_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.debezium,
      SEAT_DB_POOL_SIZE: '8',
    }),
    ctx.logger,
  );
  return { ...database, service };
}

export async function startBenchSeatPipeline(
  ctx: BenchContext,
  label: string,
  connectUrl = ctx.stack.connectUrl,
): Promise<BenchSeatPipeline> {
  const database = await openBenchSeatDatabase(ctx, label);
  const { name, service } = database;
  const connector = parseSettings(connectorSettings, {
    CONNECT_URL: connectUrl,
    ...LOCAL_CONNECT_ENV,
    CONNECTOR_NAME: name,
    KAFKA_BROKERS: ctx.stack.kafkaBrokers.join(','),
    SEAT_DB_PORT: String(ctx.stack.postgresPort),
    SEAT_DB_NAME: name,
    CONNECTOR_SEAT_DB_URL: database.url,
    SLOT_NAME: name,
    TOPIC_PREFIX: name,
    TOPIC_PARTITIONS: '3',
    HEARTBEAT_INTERVAL_MS: '2000',
    ...ctx.kafkaEnv,
  });
  await applyOutboxConnector(connector, ctx.logger);
  const topics = { seat: topicFor(name, 'seat'), order: topicFor(name, 'order') };
  return {
    connector,
    databaseUrl: database.url,
    service,
    topics,
    pause: () => setState(ctx, connector, 'pause', 'PAUSED'),
    resume: () => setState(ctx, connector, 'resume', 'RUNNING'),
    teardown: async () => {
      await service.close();
      await deleteConnector(connector, name);
      await waitFor(
        async () => {
          const { rows } = await adminSql(ctx, 'select active from pg_replication_slots where slot_name = $1', [name]);
          if (rows.length === 0) return true;
          if (rows[0].active) return false;
          await adminSql(ctx, 'select pg_drop_replication_slot($1)', [name]);
          return true;
        },
        { timeoutMs: 30_000, intervalMs: 250, description: `slot ${name} released and dropped` },
      );
      await database.drop();
      const admin = ctx.kafka.admin();
      await admin.connect();
      const existing = new Set(await admin.listTopics());
      const ours = [topics.seat, topics.order, `${topics.seat}.dlq`, `${topics.order}.dlq`].filter((t) =>
        existing.has(t),
      );
      await admin.deleteTopics({ topics: ours }).catch(() => undefined);
      await admin.disconnect();
    },
  };
}
