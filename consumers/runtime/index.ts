/**
 * The consumer runtime as a library: everything a team needs to write a consumer of the seat and
 * order events, from this one module. A consumer is
 *
 * 1. a {@link ConsumerDefinition} built with {@link defineConsumer}: its name, topics, the catalogue
 *    event types it handles (each with a validator and a deadline policy, {@link catalogueEventTypes}),
 *    its effects, which receive those events typed ({@link CatalogueEvent}: a union discriminated by
 *    `type`, payloads typed from the Avro schemas) and, when it keeps a read model, its own
 *    migrations ({@link ConsumerMigrations});
 * 2. a settings table: {@link consumerSettings} (the settings every consumer shares) spread into
 *    {@link defineSettings} beside the consumer's own;
 * 3. a `main.ts` that hands both to {@link runConsumerProgram}, the program frame: `--help`, settings,
 *    the consumer database and its migrations, Kafka, the registry, `/metrics`, graceful shutdown.
 *
 * The runtime does the rest: CloudEvent parsing, Avro decoding through the registry, the inbox
 * (each event's effect applied once however often it is delivered), retries, deadlines, dead
 * letters and metrics. The guide: docs/writing-a-consumer.md.
 */

// Defining a consumer and its event types.
export type {
  CheckedConsumerDefinition,
  ConsumedEvent,
  ConsumerDefinition,
  ConsumerMigrations,
  DeliveryPolicy,
  EventOf,
  EventTypes,
  EventTypeSpec,
  ExternalEffects,
  LatePolicy,
  PayloadOf,
  SourceRecord,
  TransactionalEffects,
} from './types.js';
export { defineConsumer } from './types.js';
export { type CatalogueEvent, type CatalogueEventTypes, catalogueEventTypes, payloadSchemas } from '../payloads.js';

// The event catalogue: names, ce_types, payload types and topics.
export {
  EVENTS,
  type EventName,
  type EventPayloads,
  type EventType,
  type OrderConfirmed,
  type SeatHeld,
  type SeatHoldExpired,
  type SeatReleased,
  type SeatSold,
  deadLetterTopicFor,
  topicFor,
} from '../../events/catalogue.js';

// How it runs in Kubernetes (consumers/team-consumers.ts lists it).
export type { ConsumerDeployment } from './deployment.js';

// Effects: a transactional effect's client, and the error a handler throws for a value it can never apply.
export type { PoolClient } from '../../lib/postgres.js';
export { PoisonError, TransientError } from './failures.js';

// Settings: the common consumer settings and the parsers for a consumer's own.
export { type CommonConsumerConfig, consumerSettings } from './settings.js';
export {
  type Config,
  defineSettings,
  zBool,
  zDurationMs,
  zEnum,
  zInt,
  zList,
  zString,
  zUrl,
} from '../../lib/settings.js';

// The program frame, and the pieces a test runs a consumer with in its own process.
export { type BuiltConsumer, runConsumerProgram } from './program.js';
export { type RunningConsumer, type StartConsumerOptions, startConsumer } from './consumer.js';
export { type DecodeLimits, DEFAULT_DECODE_LIMITS } from './decode-limits.js';
export { CONSUMER_MIGRATIONS, migrateConsumerDatabase } from './migrations.js';
export type { Logger } from '../../lib/logger.js';
/** A consumer's migrations folder beside its module, from the sources and from the compiled program alike. */
export { besideModule } from '../../lib/source-tree.js';
