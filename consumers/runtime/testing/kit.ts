/**
 * Runs a consumer definition over given records as the runtime would, without Kafka: the real
 * processing code (`processBatch`: decoding, the inbox, retries, isolation, deadlines, dead
 * letters) on a real Postgres database, with a recording partition control and dead-letter
 * producer (partition.ts) and the in-process registry (registry.ts). A run delivers each
 * partition's records as kafkajs would: a held partition is fetched again from its committed
 * offset when its retry timer resumes it, an abandoned batch after a rejoin, until every record
 * is committed past (or `maxDeliveries`).
 */
import { randomUUID } from 'node:crypto';
import { createLogger, type Logger } from '../../../lib/logger.js';
import type { Pool } from '../../../lib/postgres.js';
import type { ProcessingContext } from '../context.js';
import { type DecodeLimits, decodeLimitsWith } from '../decode-limits.js';
import { RuntimeEvents, type RuntimeEventMap } from '../lifecycle.js';
import { PartitionStates } from '../partition-state.js';
import { AttemptCounts } from '../delivery-attempts.js';
import { processBatch, releaseHold } from '../process-batch.js';
import type { ConsumedEvent, ConsumerDefinition, DeliveryPolicy, SourceRecord } from '../types.js';
import { RecordingPartitionControl, type RecordingProducer, recordingProducer } from './partition.js';
import { type RawTestRecord, type TestEvent, testRecords } from './records.js';
import { type InProcessRegistry, inProcessRegistry } from './registry.js';

/** Retries in milliseconds, three poison attempts, no late-retry window: a test's failures resolve at once. */
export const TEST_POLICY: DeliveryPolicy = {
  deadlineMs: 60_000,
  lateRetryWindowMs: 0,
  deliveryLimit: 3,
  retryBaseMs: 1,
  retryCapMs: 10,
};

export interface ConsumerTestKitOptions {
  /** The consumer database, migrated (startTestPostgres().createDatabase(definition) gives one). */
  pool: Pool;
  policy?: Partial<DeliveryPolicy>;
  decodeLimits?: Partial<DecodeLimits>;
  /** Default: silent. */
  logger?: Logger;
  /** Most batches one partition is delivered in per run (each retry is one). Default 100. */
  maxDeliveries?: number;
}

/** One call of the consumer's handler (`apply` with its events, or `perform` with one). */
export interface HandlerCall {
  eventIds: string[];
  types: string[];
  /** The error message when the handler threw. */
  threw?: string;
}

/** An inbox row of the consumer: an event whose effect the runtime applied (or, external, claimed). */
export interface InboxRow {
  eventId: string;
  type: string;
  topic: string;
  partition: number;
  offset: string;
  status: 'applied' | 'claimed' | 'sent';
}

export interface DeadLetter {
  eventId: string | undefined;
  /** `dlq_reason`: why (see DeadLetterReason). */
  reason: string;
  attempts: number;
  topic: string;
  sourceOffset: string;
}

export interface RunReport {
  /** Inbox rows written during the run, in topic, partition and offset order: what was applied. */
  applied: InboxRow[];
  handlerCalls: HandlerCall[];
  /** Each retry the runtime scheduled, with the kind of failure it retries. */
  retries: RuntimeEventMap['retry'][0][];
  /** Each `failing` report (the alert's source): an infrastructure failure holding a partition. */
  failing: RuntimeEventMap['failing'][0][];
  deadLetters: DeadLetter[];
  /** Events the inbox found done already (redeliveries). */
  duplicates: number;
  /** Records of types the consumer does not handle, committed without an effect. */
  skipped: number;
  /** Per partition: the offset committed through last (undefined: nothing committed), pauses and batches. */
  partitions: {
    topic: string;
    partition: number;
    committedThrough: string | undefined;
    pauses: number;
    batches: number;
  }[];
  /** Records not committed past when the run ended (left by `maxDeliveries`). */
  uncommitted: SourceRecord[];
}

export type TestInput = TestEvent | RawTestRecord | SourceRecord;

function headerText(headers: SourceRecord['headers'], name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}

/** The definition with its handler recorded (the runtime is handed this one). */
function recordedDefinition(definition: ConsumerDefinition, calls: HandlerCall[]): ConsumerDefinition {
  const record = async (events: readonly ConsumedEvent[], call: () => Promise<void>): Promise<void> => {
    const entry: HandlerCall = { eventIds: events.map((e) => e.id), types: events.map((e) => e.type) };
    calls.push(entry);
    try {
      await call();
    } catch (err) {
      entry.threw = err instanceof Error ? err.message : String(err);
      throw err;
    }
  };
  const { effects } = definition;
  if (effects.kind === 'transactional')
    return {
      ...definition,
      effects: { ...effects, apply: (client, events) => record(events, () => effects.apply(client, events)) },
    };
  return { ...definition, effects: { ...effects, perform: (event) => record([event], () => effects.perform(event)) } };
}

/** One consumer process as the runtime builds it (consumer.ts), its Kafka parts recorded. */
export interface TestConsumerProcess {
  ctx: ProcessingContext;
  deadLetters: RecordingProducer;
  handlerCalls: HandlerCall[];
  /** Drops every partition's state (a rebalance or a restart of the group member). */
  rejoin(): Promise<void>;
  /** Drops the states and releases what they hold (the runtime's stop). */
  close(): Promise<void>;
}

export class ConsumerTestKit {
  readonly definition: ConsumerDefinition;
  readonly registry: InProcessRegistry = inProcessRegistry();
  readonly #options: ConsumerTestKitOptions;

  constructor(definition: ConsumerDefinition, options: ConsumerTestKitOptions) {
    this.definition = definition;
    this.#options = options;
  }

  /** The inputs as records, offsets counted from 0 per partition (build once to deliver the same records twice). */
  records(inputs: readonly TestInput[]): Promise<SourceRecord[]> {
    return testRecords(this.definition, this.registry, inputs);
  }

  /** A fresh consumer process over the kit's database: new partition states, a new claim token. */
  process(): TestConsumerProcess {
    const handlerCalls: HandlerCall[] = [];
    const deadLetters = recordingProducer();
    const partitions = new PartitionStates((held) => releaseHold(ctx, held));
    const ctx: ProcessingContext = {
      definition: recordedDefinition(this.definition, handlerCalls),
      groupId: this.definition.name,
      registry: this.registry,
      pool: this.#options.pool,
      attempts: new AttemptCounts(this.#options.pool),
      producer: deadLetters.producer,
      logger: this.#options.logger ?? createLogger({ name: this.definition.name, level: 'silent' }),
      policy: { ...TEST_POLICY, ...this.#options.policy },
      decodeLimits: decodeLimitsWith(this.#options.decodeLimits),
      events: new RuntimeEvents(),
      claimToken: randomUUID(),
      performedNotStamped: new Set(),
      partitions,
    };
    return {
      ctx,
      deadLetters,
      handlerCalls,
      rejoin: async () => {
        partitions.dropAll();
        await partitions.released();
      },
      close: () => partitions.close(),
    };
  }

  /** Delivers the inputs as one consumer process from no committed offset, to the end; reports what happened. */
  async run(inputs: readonly TestInput[]): Promise<RunReport> {
    const records = await this.records(inputs);
    const consumer = this.process();
    const started = await this.#databaseNow();
    const report = listen(consumer);
    const byPartition = new Map<string, SourceRecord[]>();
    for (const record of records) {
      const where = `${record.topic}\u0000${record.partition}`;
      byPartition.set(where, [...(byPartition.get(where) ?? []), record]);
    }
    try {
      const partitions = await Promise.all(
        [...byPartition.values()].map((partitionRecords) => this.#deliver(consumer, partitionRecords)),
      );
      report.partitions.push(...partitions.map((p) => p.summary));
      report.uncommitted.push(...partitions.flatMap((p) => p.uncommitted));
    } finally {
      await consumer.close();
    }
    report.handlerCalls.push(...consumer.handlerCalls);
    report.deadLetters.push(...consumer.deadLetters.sent.map(deadLetterOf));
    report.applied.push(...(await this.inbox(started)).filter((row) => row.status !== 'claimed'));
    return report;
  }

  /** The consumer's inbox rows (received since `since`, a database time, when given), in offset order. */
  async inbox(since?: Date): Promise<InboxRow[]> {
    const { rows } = await this.#options.pool.query<InboxRow>(
      /* sql */ `SELECT event_id AS "eventId", event_type AS type, source_topic AS topic, source_partition AS partition,
        source_offset::text AS offset, status FROM inbox WHERE consumer = $1 AND ($2::timestamptz IS NULL OR received_at >= $2)
        ORDER BY source_topic, source_partition, source_offset`,
      [this.definition.name, since ?? null],
    );
    return rows;
  }

  async #databaseNow(): Promise<Date> {
    return (
      (await this.#options.pool.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]?.now ?? new Date(0)
    );
  }

  /** One partition's records, batch after batch from the committed offset, as kafkajs fetches them. */
  async #deliver(consumer: TestConsumerProcess, records: readonly SourceRecord[]) {
    const first = records[0] as SourceRecord;
    const summary = {
      topic: first.topic,
      partition: first.partition,
      committedThrough: undefined as string | undefined,
      pauses: 0,
      batches: 0,
    };
    const pending = () =>
      records.filter(
        (r) => summary.committedThrough === undefined || BigInt(r.offset) > BigInt(summary.committedThrough),
      );
    const limit = this.#options.maxDeliveries ?? 100;
    while (pending().length > 0 && summary.batches < limit) {
      const control = new RecordingPartitionControl(first.topic, first.partition);
      summary.batches += 1;
      await processBatch(consumer.ctx, control, pending());
      summary.committedThrough = control.committedThrough ?? summary.committedThrough;
      summary.pauses += control.pauses;
      if (control.paused) await control.whenResumed();
      else if (pending().length > 0) await consumer.rejoin(); // abandoned: delivered again after a rejoin
    }
    return { summary, uncommitted: pending() };
  }
}

function listen(consumer: TestConsumerProcess): RunReport {
  const report: RunReport = {
    applied: [],
    handlerCalls: [],
    retries: [],
    failing: [],
    deadLetters: [],
    duplicates: 0,
    skipped: 0,
    partitions: [],
    uncommitted: [],
  };
  const { events } = consumer.ctx;
  events.on('retry', (retry) => report.retries.push(retry));
  events.on('failing', (failing) => report.failing.push(failing));
  events.on('duplicate', ({ count }) => (report.duplicates += count));
  events.on('skipped', () => (report.skipped += 1));
  return report;
}

function deadLetterOf(sent: RecordingProducer['sent'][number]): DeadLetter {
  return {
    eventId: headerText(sent.headers, 'ce_id'),
    reason: headerText(sent.headers, 'dlq_reason') ?? '',
    attempts: Number(headerText(sent.headers, 'dlq_attempts') ?? 'NaN'),
    topic: sent.topic,
    sourceOffset: headerText(sent.headers, 'dlq_source_offset') ?? '',
  };
}
