/**
 * A seat pipeline whose seat database lives on the slot-test cluster (1 MB WAL segments), so its
 * slot can be lost without touching the shared stack: migrated seat database with the real
 * roles, the real outbox connector (connectors/seat-outbox.json) on the stack's Connect, and the
 * seat service.
 */
import pg from 'pg';
import { deleteConnector } from '../../../connectors/connect-client.js';
import { applyOutboxConnector, type ConnectorConfig } from '../../../connectors/outbox-connector.js';
import { connectorSettings } from '../../../connectors/settings.js';
import { createPool } from '../../../lib/postgres.js';
import { parseSettings } from '../../../lib/settings.js';
import { migrateSeatDatabase, setupRoles } from '../../../seat-service/database-setup.js';
import { openSeatService, type SeatService } from '../../../seat-service/service.js';
import { seatServiceSettings } from '../../../seat-service/settings.js';
import { LOCAL_CONNECT_ENV, LOCAL_ROLE_PASSWORDS } from '../../../stack/config.js';
import { track } from '../../support/leak-guard.js';
import { dropSlot, testLogger } from '../../support/seat-pipeline.js';
import type { StackEndpoints } from '../../support/stack.js';
import type { SlotCluster } from '../../slot-monitor/support/slot-cluster.js';

const DEBEZIUM_ROLE = { user: 'stagefront_debezium', password: LOCAL_ROLE_PASSWORDS.debezium } as const;

export interface LostSlotPipeline {
  name: string;
  database: string;
  adminUrl: string;
  /** The seat database as the connector's role (what the recovery and reconciliation use). */
  debeziumUrl: string;
  connector: ConnectorConfig;
  service: SeatService;
  topics: { seat: string; order: string };
  teardown(): Promise<void>;
}

async function prepareSeatDatabase(adminUrl: string): Promise<void> {
  const adminPool = createPool({
    connectionString: adminUrl,
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
}

export async function startLostSlotPipeline(
  cluster: SlotCluster,
  stack: StackEndpoints,
  name: string,
): Promise<LostSlotPipeline> {
  const database = await cluster.createDatabase(name);
  const adminUrl = cluster.urlFor(database);
  await prepareSeatDatabase(adminUrl);
  const connector = parseSettings(connectorSettings, {
    CONNECT_URL: stack.connectUrl,
    ...LOCAL_CONNECT_ENV,
    CONNECTOR_NAME: name,
    KAFKA_BROKERS: stack.kafkaBrokers.join(','),
    SEAT_DB_PORT: String(cluster.port),
    SEAT_DB_NAME: database,
    CONNECTOR_SEAT_DB_URL: adminUrl,
    SLOT_NAME: name,
    TOPIC_PREFIX: name,
    TOPIC_PARTITIONS: '3',
    HEARTBEAT_INTERVAL_MS: '2000',
  });
  await applyOutboxConnector(connector, testLogger);
  const serviceUrl = cluster.urlFor(database, 'stagefront_service', LOCAL_ROLE_PASSWORDS.service);
  const service = await openSeatService(
    parseSettings(seatServiceSettings, {
      SEAT_DB_URL: serviceUrl,
      SEAT_DB_ADMIN_URL: adminUrl,
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      HOLD_TTL_MS: '600000',
      SEAT_SERVICE_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.service,
      DEBEZIUM_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.debezium,
    }),
    testLogger,
  );
  const teardown = track(`lost-slot pipeline ${name}`, async () => {
    await service.close();
    await deleteConnector(stack.connect, name);
    await dropSlot(adminUrl, name);
    await cluster.admin(/* sql */ `drop database if exists ${pg.escapeIdentifier(database)} with (force)`);
  });
  return {
    name,
    database,
    adminUrl,
    debeziumUrl: cluster.urlFor(database, DEBEZIUM_ROLE.user, DEBEZIUM_ROLE.password),
    connector,
    service,
    topics: { seat: `${name}.seat`, order: `${name}.order` },
    teardown,
  };
}
