/**
 * What a consumer built on the runtime declares (its event types and effects) and what its
 * handler receives (a decoded CloudEvent with the Kafka record it came from).
 */
import type { IHeaders } from '../../lib/kafka.js';
import type { PoolClient } from '../../lib/postgres.js';

/** The Kafka record as received: kept whole so a dead letter can carry the original bytes. */
export interface SourceRecord {
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: IHeaders;
  /** Kafka timestamp, ms since the epoch, as text. */
  timestamp: string;
}

/**
 * A CloudEvent parsed from a record, its Avro payload decoded through the registry. `P` is the
 * payload's type and `T` its ce_type, so a union of events is discriminated by `type`.
 */
export interface ConsumedEvent<P = unknown, T extends string = string> {
  id: string;
  type: T;
  source: string;
  subject: string | undefined;
  /** ce_dataschema: where the registry serves the writer's schema (absent on events written before it existed). */
  dataschema?: string;
  /** ce_time as the producer wrote it, and in ms since the epoch. */
  time: string;
  timeMs: number;
  key: string | null;
  /** The registry id of the writer's schema. */
  schemaId: number;
  payload: P;
  record: SourceRecord;
}

/**
 * What happens to an event of this type that is still failing (for the infrastructure's reasons)
 * past its deadline. Either way an alert fires at the deadline.
 * - `dead-letter`: its meaning changes with lateness (a confirmation email hours late): dead-letter
 *   it with reason "deadline exceeded" and move on.
 * - `keep-retrying`: the effect is right however late (a read model, a ledger): hold the partition
 *   and keep trying.
 */
export type LatePolicy = 'dead-letter' | 'keep-retrying';

export interface EventTypeSpec<P = unknown> {
  /** Applies past the deadline; see LatePolicy. */
  whenLate: LatePolicy;
  /** How late the effect may be before somebody has to know; age from ce_time. Default: the consumer's deadline. */
  deadlineMs?: number;
  /**
   * The Avro schema this consumer was built for. Payloads written with any registered version are
   * resolved into it (new fields dropped, missing ones defaulted). Omitted: the writer's schema.
   */
  readerSchema?: string;
  /** Validates the decoded payload; throws (e.g. a zod error) when it is invalid. */
  parse(payload: unknown): P;
}

/** A consumer's event types by ce_type, each with its payload's type. */
export type EventTypes = Readonly<Record<string, EventTypeSpec>>;

/** The payload type an event type entry's `parse` gives. */
export type PayloadOf<S> = S extends EventTypeSpec<infer P> ? P : never;

/**
 * The event a consumer of `T` receives: a union discriminated by `type`, each member's payload
 * typed by its entry (`switch (event.type)` narrows `event.payload`).
 */
export type EventOf<T extends EventTypes> = {
  [K in keyof T & string]: ConsumedEvent<PayloadOf<T[K]>, K>;
}[keyof T & string];

/** Effects inside the consumer database: applied in the same transaction as the inbox rows. */
export interface TransactionalEffects<E extends ConsumedEvent = ConsumedEvent> {
  kind: 'transactional';
  /** The batch's new events only, in offset order, inside the batch's transaction. */
  apply(client: PoolClient, events: readonly E[]): Promise<void>;
}

/**
 * Effects that leave the building (an email): the inbox row is claimed first, the effect is
 * performed with the event id as its idempotency key, and the row stamped after.
 */
export interface ExternalEffects<E extends ConsumedEvent = ConsumedEvent> {
  kind: 'external';
  /** A claim older than this counts as abandoned (its process died mid-send) and is claimed again. */
  claimAbandonedAfterMs: number;
  /** Events of different keys performed at the same time (each key stays in order). Default 1. */
  concurrency?: number;
  /** At most this many events are claimed and performed between two commits (and heartbeats). Default 32. */
  maxGroupSize?: number;
  perform(event: E): Promise<void>;
}

/**
 * A consumer: its event types and the effects that receive their events (`E`, a union
 * discriminated by `type`). Build one with {@link defineConsumer}, which infers `E` from the event
 * types and checks the handler against it. `ConsumerDefinition` without `E` is any consumer, as
 * the runtime holds it.
 */
export interface ConsumerDefinition<E extends ConsumedEvent = ConsumedEvent> {
  /** The inbox's consumer name, the `dlq_consumer` header and the `consumer` metric label. */
  name: string;
  topics: readonly string[];
  /** By ce_type. Events of other types on the same topics are skipped (committed, not applied). */
  eventTypes: EventTypes;
  effects: TransactionalEffects<E> | ExternalEffects<E>;
  /** The consumer's own read-model migrations, applied after the runtime's shared ones. */
  migrations?: ConsumerMigrations;
}

/**
 * The effects {@link defineConsumer} accepts for events `E`: the handler must take every one of
 * them. (The methods of TransactionalEffects and ExternalEffects are compared both ways, so that
 * a typed definition is a `ConsumerDefinition`; these function properties are compared strictly,
 * so a handler written for fewer event types than the definition lists is refused.)
 */
type CheckedEffects<E extends ConsumedEvent> =
  | (Omit<TransactionalEffects<E>, 'apply'> & { apply: (client: PoolClient, events: readonly E[]) => Promise<void> })
  | (Omit<ExternalEffects<E>, 'perform'> & { perform: (event: E) => Promise<void> });

/** What {@link defineConsumer} takes: a definition with its event types `T`, its handler checked strictly against them. */
export interface CheckedConsumerDefinition<T extends EventTypes> extends Omit<
  ConsumerDefinition<EventOf<T>>,
  'eventTypes' | 'effects'
> {
  eventTypes: T;
  effects: CheckedEffects<EventOf<T>>;
}

/**
 * A consumer definition, its handler typed from its event types: with `eventTypes` from
 * `catalogueEventTypes(['seatHeld', 'seatSold'], …)`, `apply(client, events)` receives
 * `CatalogueEvent<'seatHeld' | 'seatSold'>` events, their payloads `SeatHeld` and `SeatSold` by
 * `event.type`, without a cast.
 */
export function defineConsumer<T extends EventTypes>(
  definition: CheckedConsumerDefinition<T>,
): ConsumerDefinition<EventOf<T>> {
  return definition;
}

/**
 * A consumer's own migrations: numbered SQL files (`000001_create_counts.sql`) in a folder next to
 * its code, applied in a Postgres schema of its own. Their versions are recorded in
 * `<schema>.schema_migrations`, apart from the runtime's (`public.schema_migrations`) and from every
 * other consumer's, so two consumers' numbers never clash and a consumer is added or removed
 * without touching the shared folder. The files run with `search_path` set to the schema, so
 * `create table counts` creates `<schema>.counts`; the effects name it `<schema>.counts`.
 */
export interface ConsumerMigrations {
  /** Absolute path of the folder. */
  folder: string;
  /** Lower-case letters, digits and underscores; never `public`. Usually the consumer's name with `_` for `-`. */
  schema: string;
}

/** Retry to a deadline, poison to a delivery limit (docs/design-decisions.md, "Retry to a deadline, not a count"). */
export interface DeliveryPolicy {
  /** The deadline of event types that declare none: how late an effect may be (age from ce_time). */
  deadlineMs: number;
  /** An event that fails when already past its deadline is retried this long before its LatePolicy applies. */
  lateRetryWindowMs: number;
  /** Attempts of a poison record (or one that crashed the process), counted durably, before it is dead-lettered. */
  deliveryLimit: number;
  retryBaseMs: number;
  retryCapMs: number;
}
