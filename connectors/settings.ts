import { defineSettings, zDurationMs, zInt, zList, zPort, zString, zUrl } from '../lib/settings.js';

const name = (example: string) => zString({ pattern: /^[a-z_][a-z0-9_]*$/, expected: 'a lower-case Postgres name (letters, digits, _)', example });

/** Settings of the connector command; the ${UPPER_CASE} placeholders of the configuration file come from here. */
export const connectorSettings = defineSettings('connector', {
  connectUrl: { env: 'CONNECT_URL', default: 'http://127.0.0.1:18083', parser: zUrl({ example: 'http://connect:8083' }), description: 'Kafka Connect REST API.' },
  connectorName: { env: 'CONNECTOR_NAME', default: 'seat-outbox', parser: zString({ minLength: 1, example: 'seat-outbox' }), description: 'Name of the Debezium connector in Connect.' },
  kafkaBrokers: { env: 'KAFKA_BROKERS', default: '127.0.0.1:19092', parser: zList({ minItems: 1, example: 'kafka:9092' }), description: 'Kafka bootstrap servers, for creating the event topics before the connector runs.' },
  seatDbHost: { env: 'SEAT_DB_HOST', default: '127.0.0.1', parser: zString({ minLength: 1, example: 'db' }), description: 'Seat database host as Connect reaches it.' },
  seatDbPort: { env: 'SEAT_DB_PORT', default: '54329', parser: zPort(), description: 'Seat database port as Connect reaches it.' },
  seatDbName: { env: 'SEAT_DB_NAME', default: 'stagefront', parser: zString({ minLength: 1, example: 'stagefront' }), description: 'Seat database name.' },
  debeziumUser: { env: 'DEBEZIUM_DB_USER', default: 'stagefront_debezium', parser: name('stagefront_debezium'), description: 'Role Debezium logs in as (REPLICATION, SELECT on the outbox only).' },
  debeziumPassword: { env: 'DEBEZIUM_DB_PASSWORD', default: 'stagefront_debezium', parser: zString({ minLength: 1, example: 'a-long-random-password' }), description: 'Password of that role.', secret: true },
  slotName: { env: 'SLOT_NAME', default: 'stagefront_outbox', parser: name('stagefront_outbox'), description: 'Logical replication slot the connector owns.' },
  publicationName: { env: 'PUBLICATION_NAME', default: 'stagefront_outbox', parser: name('stagefront_outbox'), description: 'Publication created by the seat migrations (outbox inserts only).' },
  topicPrefix: { env: 'TOPIC_PREFIX', default: 'stagefront', parser: zString({ pattern: /^[a-zA-Z0-9_-]+$/, expected: 'letters, digits, _ or -', example: 'stagefront' }), description: 'Topics are <prefix>.<aggregate type>, e.g. stagefront.seat.' },
  topicPartitions: { env: 'TOPIC_PARTITIONS', default: '6', parser: zInt({ min: 1, max: 256, example: '6' }), description: 'Partitions of each event topic (consumers scale out up to this many).' },
  heartbeatIntervalMs: { env: 'HEARTBEAT_INTERVAL_MS', default: '10000', parser: zDurationMs({ min: 1000, example: '10000' }), description: 'Debezium heartbeat: keeps the slot advancing when the outbox is quiet.' },
  readyTimeoutMs: { env: 'CONNECTOR_READY_TIMEOUT_MS', default: '60000', parser: zDurationMs({ min: 1000, example: '60000' }), description: 'How long apply waits for the connector and its task to be RUNNING.' },
});
