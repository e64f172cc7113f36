/**
 * The seat pipeline on a replicated pair: the seat database migrated on the primary (the standby
 * gets it, roles included, through replication), the real outbox connector on the stack's Connect
 * reading the primary, and a seat service per database server (the one on the primary dies with
 * it; after the failover a new one writes to the promoted standby).
 */
import { deleteConnector } from '../../../connectors/connect-client.js';
import { applyOutboxConnector } from '../../../connectors/outbox-connector.js';
import { connectorSettings } from '../../../connectors/settings.js';
import { createPool } from '../../../lib/postgres.js';
import { parseSettings } from '../../../lib/settings.js';
import { migrateSeatDatabase, setupRoles } from '../../../seat-service/database-setup.js';
import { openSeatService, type SeatService } from '../../../seat-service/service.js';
import { seatServiceSettings } from '../../../seat-service/settings.js';
import { LOCAL_CONNECT_ENV, LOCAL_ROLE_PASSWORDS } from '../../../stack/config.js';
import { track } from '../../support/leak-guard.js';
import { testLogger } from '../../support/seat-pipeline.js';
import type { StackEndpoints } from '../../support/stack.js';
import type { PairMember, ReplicatedPair } from './replicated-pair.js';

const DEBEZIUM_ROLE = { user: 'stagefront_debezium', password: LOCAL_ROLE_PASSWORDS.debezium } as const;

export interface FailoverPipeline {
  name: string;
  database: string;
  topics: { seat: string; order: string };
  /** The seat database on one member, as the admin or as the connector's role. */
  adminUrl(member: PairMember): string;
  debeziumUrl(member: PairMember): string;
  /** A seat service writing to that member; closed by teardown. */
  openService(member: PairMember): Promise<SeatService>;
  teardown(): Promise<void>;
}

export async function startFailoverPipeline(
  pair: ReplicatedPair,
  stack: StackEndpoints,
  name: string,
): Promise<FailoverPipeline> {
  const database = await pair.createDatabase(name);
  const adminUrl = (member: PairMember) => member.urlFor(database);
  const adminPool = createPool({
    connectionString: adminUrl(pair.primary),
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
  await applyOutboxConnector(
    parseSettings(connectorSettings, {
      CONNECT_URL: stack.connectUrl,
      ...LOCAL_CONNECT_ENV,
      CONNECTOR_NAME: name,
      KAFKA_BROKERS: stack.kafkaBrokers.join(','),
      SEAT_DB_PORT: String(pair.primary.port),
      SEAT_DB_NAME: database,
      CONNECTOR_SEAT_DB_URL: adminUrl(pair.primary),
      SLOT_NAME: name,
      TOPIC_PREFIX: name,
      TOPIC_PARTITIONS: '3',
      HEARTBEAT_INTERVAL_MS: '2000',
    }),
    testLogger,
  );
  const services: SeatService[] = [];
  const openService = async (member: PairMember) => {
    const service = await openSeatService(
      parseSettings(seatServiceSettings, {
        SEAT_DB_URL: member.urlFor(database, 'stagefront_service', LOCAL_ROLE_PASSWORDS.service),
        SEAT_DB_ADMIN_URL: adminUrl(member),
        SCHEMA_REGISTRY_URL: stack.registryUrl,
        HOLD_TTL_MS: '600000',
        SEAT_SERVICE_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.service,
        DEBEZIUM_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.debezium,
      }),
      testLogger,
    );
    services.push(service);
    return service;
  };
  const teardown = track(`failover pipeline ${name}`, async () => {
    for (const service of services) await service.close().catch(() => undefined);
    await deleteConnector(stack.connect, name);
  });
  return {
    name,
    database,
    topics: { seat: `${name}.seat`, order: `${name}.order` },
    adminUrl,
    debeziumUrl: (member) => member.urlFor(database, DEBEZIUM_ROLE.user, DEBEZIUM_ROLE.password),
    openService,
    teardown,
  };
}
