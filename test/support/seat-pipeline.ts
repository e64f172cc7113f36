import { afterAll, beforeAll } from 'vitest';
import { deleteConnector } from '../../connectors/connect-client.js';
import { applyOutboxConnector, type ConnectorConfig } from '../../connectors/outbox-connector.js';
import { connectorSettings } from '../../connectors/settings.js';
import { createKafka, type KafkaMessage } from '../../lib/kafka.js';
import type { KafkaClientSecurity } from '../../lib/kafka-security.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import { createPool } from '../../lib/postgres.js';
import { parseSettings } from '../../lib/settings.js';
import { waitFor } from '../../lib/wait.js';
import { migrateSeatDatabase, setupRoles } from '../../seat-service/database-setup.js';
import { createShow, type SectionPlan } from '../../seat-service/inventory.js';
import { openSeatService, type SeatService, type SeatServiceConfig } from '../../seat-service/service.js';
import { seatServiceSettings } from '../../seat-service/settings.js';
import { LOCAL_CONNECT_ENV, LOCAL_ROLE_PASSWORDS } from '../../stack/config.js';
import { track } from './leak-guard.js';
import { adminQuery, createTestDatabase, endpoints, uniqueName } from './stack.js';

export const testLogger: Logger = createLogger({
  name: 'test',
  level: (process.env.TEST_LOG_LEVEL as 'info' | undefined) ?? 'warn',
});

export interface SeatPipeline {
  databaseUrl: string;
  adminUrl: string;
  connector: ConnectorConfig;
  service: SeatService;
  serviceConfig: SeatServiceConfig;
  topics: { seat: string; order: string };
  teardown(): Promise<void>;
}

/** A seat database of its own, migrated, with roles, a running outbox connector and unique topics. */
export async function startSeatPipeline(prefix: string, overrides: Record<string, string> = {}): Promise<SeatPipeline> {
  const stack = endpoints();
  const database = await createTestDatabase(prefix);
  const adminPool = createPool({
    connectionString: database.url,
    applicationName: 'test-migrate',
    logger: testLogger,
    max: 1,
  });
  try {
    await migrateSeatDatabase(adminPool, testLogger);
    await setupRoles(adminPool, LOCAL_ROLE_PASSWORDS);
  } finally {
    await adminPool.end();
  }
  const name = uniqueName(prefix).toLowerCase();
  const connector = parseSettings(connectorSettings, {
    CONNECT_URL: stack.connectUrl,
    ...LOCAL_CONNECT_ENV,
    CONNECTOR_NAME: name,
    KAFKA_BROKERS: stack.kafkaBrokers.join(','),
    SEAT_DB_PORT: String(stack.postgresPort),
    SEAT_DB_NAME: database.name,
    CONNECTOR_SEAT_DB_URL: database.url,
    SLOT_NAME: name,
    TOPIC_PREFIX: name,
    TOPIC_PARTITIONS: '3',
    HEARTBEAT_INTERVAL_MS: '2000',
    ...overrides,
  });
  await applyOutboxConnector(connector, testLogger);
  const serviceUrl = database.url.replace('postgres:postgres@', `stagefront_service:${LOCAL_ROLE_PASSWORDS.service}@`);
  const serviceConfig = parseSettings(seatServiceSettings, {
    SEAT_DB_URL: serviceUrl,
    SEAT_DB_ADMIN_URL: database.url,
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    HOLD_TTL_MS: '60000',
    SEAT_SERVICE_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.service,
    DEBEZIUM_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.debezium,
  });
  const service = await openSeatService(serviceConfig, testLogger);
  const close = track(`seat pipeline ${name}`, async () => {
    await service.close();
    await deleteConnector(connector, name);
    await dropSlot(stack.postgresAdminUrl, name);
    await database.drop();
  });
  return {
    databaseUrl: serviceUrl,
    adminUrl: database.url,
    connector,
    service,
    serviceConfig,
    topics: { seat: `${name}.seat`, order: `${name}.order` },
    teardown: close,
  };
}

/** Drops a replication slot once its reader has let go of it. */
export async function dropSlot(adminUrl: string, slot: string): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await adminQuery(adminUrl, 'select active from pg_replication_slots where slot_name = $1', [
        slot,
      ]);
      if (rows.length === 0) return true;
      if (rows[0].active) return false;
      await adminQuery(adminUrl, 'select pg_drop_replication_slot($1)', [slot]);
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 250, description: `slot ${slot} to be released and dropped` },
  );
}

export interface CollectedRecord {
  topic: string;
  partition: number;
  offset: string;
  key: string;
  headers: Record<string, string>;
  value: Buffer;
  message: KafkaMessage;
}

/**
 * Reads topics from the beginning into an array until stopped (from the stack's Kafka unless `brokers`
 * names another): one entry per record on Kafka. The collector's own group may be handed a record a
 * second time (its coordinator died before the offset commit, or it rejoined): that is the same
 * record, at the same topic, partition and offset, and is kept once, so a ce_id seen twice in
 * `records` is a record written twice. `security` (kafkaClientSecurity) reaches a secured Kafka;
 * without it, plaintext.
 */
export async function collectRecords(
  topics: string[],
  brokers: string[] = endpoints().kafkaBrokers,
  security?: KafkaClientSecurity,
): Promise<{ records: CollectedRecord[]; stop: () => Promise<void> }> {
  const kafka = createKafka({
    brokers,
    clientId: 'test-collector',
    logger: testLogger,
    ...(security === undefined ? {} : { security }),
  });
  const consumer = kafka.consumer({ groupId: uniqueName('collector'), maxWaitTimeInMs: 100 });
  const records: CollectedRecord[] = [];
  const positions = new Set<string>();
  await consumer.connect();
  const stop = track('record collector', () => consumer.disconnect());
  await consumer.subscribe({ topics, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      const position = `${topic}/${partition}/${message.offset}`;
      if (positions.has(position)) return;
      positions.add(position);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {}))
        headers[k] = Buffer.isBuffer(v) ? v.toString('utf8') : String(v);
      records.push({
        topic,
        partition,
        offset: message.offset,
        key: message.key?.toString('utf8') ?? '',
        headers,
        value: message.value ?? Buffer.alloc(0),
        message,
      });
    },
  });
  return { records, stop };
}

/**
 * A test file's seat pipeline (see startSeatPipeline) with one show of one section, started in
 * beforeAll and torn down in afterAll. Call the returned function inside tests. `overrides`
 * (connector settings) is read when the pipeline starts, e.g. the URL of a Connect worker that
 * an earlier beforeAll started.
 */
export function useSeatPipeline(
  show: string,
  section: SectionPlan,
  overrides: () => Record<string, string> = () => ({}),
): () => SeatPipeline {
  let pipeline: SeatPipeline | undefined;
  beforeAll(async () => {
    pipeline = await startSeatPipeline(show, overrides());
    await createShow(pipeline.service.pool, {
      showId: show,
      title: `${show} night`,
      startsAt: new Date('2027-06-01T20:00:00Z'),
      onSaleAt: new Date('2026-12-01T10:00:00Z'),
      sections: [section],
    });
  });
  afterAll(async () => pipeline?.teardown());
  return () => {
    if (pipeline === undefined) throw new Error('the seat pipeline of this file did not start (see its beforeAll)');
    return pipeline;
  };
}
