import { z } from 'zod';
import { kafkaSecuritySettings } from '../lib/kafka-security.js';
import {
  type SettingParser,
  defineSettings,
  zBool,
  zDurationMs,
  zInt,
  zList,
  zPort,
  zString,
  zUrl,
} from '../lib/settings.js';
import { connectApiSettings } from './connect-client.js';
import { HEARTBEAT_INTERVAL_MS } from './slot-confirmation.js';

const name = (example: string) =>
  zString({ pattern: /^[a-z_][a-z0-9_]*$/, expected: 'a lower-case Postgres name (letters, digits, _)', example });

/** -1 (the brokers' default) or a replica count. */
const replicas: SettingParser<number> = {
  schema: z
    .string()
    .trim()
    .regex(/^(-1|[1-9]\d*)$/)
    .transform(Number),
  expected: "-1 (the brokers' default.replication.factor) or a whole number of at least 1",
  example: '3',
};

/** Settings of the connector command; the ${UPPER_CASE} placeholders of the configuration file come from here. */
export const connectorSettings = defineSettings('connector', {
  ...connectApiSettings('the command'),
  connectorName: {
    env: 'CONNECTOR_NAME',
    default: 'seat-outbox',
    parser: zString({ minLength: 1, example: 'seat-outbox' }),
    description: 'Name of the Debezium connector in Connect.',
  },
  kafkaBrokers: {
    env: 'KAFKA_BROKERS',
    default: '127.0.0.1:19092',
    parser: zList({ minItems: 1, example: 'kafka:9092' }),
    description: 'Kafka bootstrap servers, for creating the event topics before the connector runs.',
  },
  ...kafkaSecuritySettings,
  seatDbHost: {
    env: 'SEAT_DB_HOST',
    default: '127.0.0.1',
    parser: zString({ minLength: 1, example: 'db' }),
    description: 'Seat database host as Connect reaches it.',
  },
  seatDbPort: {
    env: 'SEAT_DB_PORT',
    default: '54329',
    parser: zPort(),
    description: 'Seat database port as Connect reaches it.',
  },
  seatDbName: {
    env: 'SEAT_DB_NAME',
    default: 'stagefront',
    parser: zString({ minLength: 1, example: 'stagefront' }),
    description: 'Seat database name.',
  },
  debeziumUser: {
    env: 'DEBEZIUM_DB_USER',
    default: 'stagefront_debezium',
    parser: name('stagefront_debezium'),
    description: 'Role Debezium logs in as (REPLICATION, SELECT on the outbox only).',
  },
  debeziumPasswordReference: {
    env: 'DEBEZIUM_DB_PASSWORD_REFERENCE',
    default: '${env:DEBEZIUM_DB_PASSWORD}',
    parser: zString({
      pattern: /^\$\{[a-z][a-zA-Z0-9_-]*:[^{}]+\}$/,
      expected: 'a Kafka Connect config provider reference such as ${env:NAME} or ${file:/path:key}',
      example: '${file:/etc/kafka/secrets/debezium.properties:password}',
    }),
    description:
      "Where the Connect worker finds the password of that role (the connector configuration holds this reference, never the password): the default reads DEBEZIUM_DB_PASSWORD from the worker's environment through its env config provider.",
  },
  slotName: {
    env: 'SLOT_NAME',
    default: 'stagefront_outbox',
    parser: name('stagefront_outbox'),
    description: 'Logical replication slot the connector owns.',
  },
  slotFailover: {
    env: 'CONNECTOR_SLOT_FAILOVER',
    default: 'no',
    parser: zBool(),
    description:
      'yes: Debezium creates its slot as a failover slot (slot.failover), which Postgres 17+ synchronizes to a standby (STACK_POSTGRES_STANDBY=yes), so the connector resumes on a promoted standby. Only read when the slot is created; refused by Postgres before 17.',
  },
  publicationName: {
    env: 'PUBLICATION_NAME',
    default: 'stagefront_outbox',
    parser: name('stagefront_outbox'),
    description: 'Publication created by the seat migrations (outbox inserts only).',
  },
  topicPrefix: {
    env: 'TOPIC_PREFIX',
    default: 'stagefront',
    parser: zString({ pattern: /^[a-zA-Z0-9_-]+$/, expected: 'letters, digits, _ or -', example: 'stagefront' }),
    description: 'Topics are <prefix>.<aggregate type>, e.g. stagefront.seat.',
  },
  topicReplicationFactor: {
    env: 'TOPIC_REPLICATION_FACTOR',
    default: '-1',
    parser: replicas,
    description:
      "Replicas of each event topic, both when this command creates it and when Connect does (topic.creation.default.replication.factor); -1 takes the brokers' default.replication.factor, which the native stack sets from STACK_KAFKA_REPLICATION_FACTOR.",
  },
  topicPartitions: {
    env: 'TOPIC_PARTITIONS',
    default: '6',
    parser: zInt({ min: 1, max: 256, example: '6' }),
    description: 'Partitions of each event topic (consumers scale out up to this many).',
  },
  heartbeatIntervalMs: {
    env: 'HEARTBEAT_INTERVAL_MS',
    default: String(HEARTBEAT_INTERVAL_MS),
    parser: zDurationMs({ min: 100, example: '1000' }),
    description:
      "Debezium heartbeat: confirms a position to the slot when the outbox is quiet, so WAL written outside the publication is released (with the worker's offset flush interval it bounds the WAL an active slot retains).",
  },
  seatDbUrl: {
    env: 'CONNECTOR_SEAT_DB_URL',
    default: undefined,
    parser: zUrl({
      protocols: ['postgres', 'postgresql'],
      example: 'postgres://slot_monitor:secret@db:5432/stagefront',
    }),
    description:
      "The seat database as this command reaches it, for status to read the slot in pg_replication_slots (any role that can log in, e.g. the slot monitor's).",
    secret: true,
  },
  slotInactiveGraceMs: {
    env: 'CONNECTOR_SLOT_INACTIVE_GRACE_MS',
    default: '15000',
    parser: zDurationMs({ min: 0, example: '15000' }),
    description:
      'How long status lets the slot be without a reader while the task is RUNNING (a task attaching after a restart) before it reports the connector failing.',
  },
  readyTimeoutMs: {
    env: 'CONNECTOR_READY_TIMEOUT_MS',
    default: '60000',
    parser: zDurationMs({ min: 1000, example: '60000' }),
    description: 'How long apply waits for the connector and its task to be RUNNING.',
  },
});
