/**
 * A test-only event type for runtime tests: `counted` events (key, seq, behaviour) applied by a
 * handler that appends one row per event to `applied_events`, so tests can see every effect,
 * its order per key, and a doubled effect.
 */
import { z } from 'zod';
import type { Pool, PoolClient } from '../../../lib/postgres.js';
import { TransientError } from '../../../consumers/runtime/failures.js';
import type { ConsumedEvent, ConsumerDefinition, LatePolicy } from '../../../consumers/runtime/types.js';
import type { Gate } from './gate.js';

export const COUNTED_TYPE = 'com.stagefront.test.counted';

/** v1; `namespace` keeps every test's subject apart. */
export function countedSchemaV1(namespace: string): string {
  return JSON.stringify({
    type: 'record',
    name: 'Counted',
    namespace,
    fields: [
      { name: 'key', type: 'string' },
      { name: 'seq', type: 'int' },
      { name: 'behaviour', type: 'string', default: 'apply' },
    ],
  });
}

/** v2: a new optional field with a default. */
export function countedSchemaV2(namespace: string): string {
  const v1 = JSON.parse(countedSchemaV1(namespace)) as { fields: unknown[] };
  return JSON.stringify({ ...v1, fields: [...v1.fields, { name: 'note', type: 'string', default: 'none' }] });
}

const countedPayload = z.object({
  key: z.string().min(1),
  seq: z.number().int().nonnegative(),
  behaviour: z.enum(['apply', 'fail', 'transient-once', 'crash', 'slow', 'gated', 'bug']),
  note: z.string().optional(),
});
export type CountedPayload = z.infer<typeof countedPayload>;

export async function createAppliedEventsTable(pool: Pool): Promise<void> {
  await pool.query(/* sql */ `
    create table if not exists applied_events (
      n bigserial primary key, consumer text not null, event_id text not null, key text not null, seq int not null, note text
    )`);
}

async function applyCounted(
  client: PoolClient,
  consumer: string,
  events: readonly ConsumedEvent[],
  transientSeen: Set<string>,
  bug: { fixed: boolean } | undefined,
  gate: Gate | undefined,
): Promise<void> {
  for (const event of events) {
    const payload = event.payload as CountedPayload;
    // A bug in the handler until the test "deploys the fix": it reads a field the payload does not have (a real TypeError).
    const venue = (payload as unknown as { venue: { id: string } }).venue;
    if (payload.behaviour === 'bug' && bug?.fixed !== true && venue.id === '') continue;
    // A data error on this record's values, as Postgres raises it (SQLSTATE 22012): poison.
    if (payload.behaviour === 'fail') await client.query(/* sql */ `select $1::int / 0`, [payload.seq]);
    // Long batches, so a rebalance lands in the middle of one.
    if (payload.behaviour === 'slow') await client.query(/* sql */ `select pg_sleep(0.05)`);
    // Held inside its batch (in the transaction, nothing committed) until the test opens the gate.
    if (payload.behaviour === 'gated') {
      if (gate === undefined) throw new Error('a gated record needs the consumer built with a gate');
      await gate.pass();
    }
    // The process dies mid-batch (only ever run in a child process).
    if (payload.behaviour === 'crash') process.exit(3);
    if (payload.behaviour === 'transient-once' && !transientSeen.has(event.id)) {
      transientSeen.add(event.id);
      throw new TransientError('provider_unavailable', 'the provider answered 503');
    }
    await client.query(
      /* sql */ `insert into applied_events (consumer, event_id, key, seq, note) values ($1, $2, $3, $4, $5)`,
      [consumer, event.id, payload.key, payload.seq, payload.note ?? null],
    );
  }
}

export interface CountedOptions {
  readerSchema?: string;
  /** Default keep-retrying with the consumer's deadline. */
  whenLate?: LatePolicy;
  deadlineMs?: number;
  /** `bug` records throw a TypeError while `fixed` is false. */
  bug?: { fixed: boolean };
  /** `gated` records wait at it until the test opens it. */
  gate?: Gate;
}

export function countedConsumer(name: string, topics: string[], options: CountedOptions = {}): ConsumerDefinition {
  const transientSeen = new Set<string>();
  const { readerSchema, whenLate = 'keep-retrying', deadlineMs, bug, gate } = options;
  return {
    name,
    topics,
    eventTypes: {
      [COUNTED_TYPE]: {
        whenLate,
        ...(deadlineMs === undefined ? {} : { deadlineMs }),
        ...(readerSchema ? { readerSchema } : {}),
        parse: (payload) => countedPayload.parse(payload),
      },
    },
    effects: {
      kind: 'transactional',
      apply: (client, events) => applyCounted(client, name, events, transientSeen, bug, gate),
    },
  };
}

export interface AppliedRow {
  event_id: string;
  key: string;
  seq: number;
  note: string | null;
}

export async function appliedRows(pool: Pool, consumer: string): Promise<AppliedRow[]> {
  const result = await pool.query<AppliedRow>(
    /* sql */ `select event_id, key, seq, note from applied_events where consumer = $1 order by n`,
    [consumer],
  );
  return result.rows;
}

/** Throws unless, for every key, the applied seqs are strictly increasing (key order kept). */
export function assertKeyOrder(rows: readonly AppliedRow[]): void {
  const lastSeq = new Map<string, number>();
  for (const row of rows) {
    const previous = lastSeq.get(row.key);
    if (previous !== undefined && row.seq <= previous)
      throw new Error(`key ${row.key}: seq ${row.seq} applied after ${previous}`);
    lastSeq.set(row.key, row.seq);
  }
}
