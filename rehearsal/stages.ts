/**
 * Where the time between a commit and its effect goes, per consumer, from what the two databases
 * already hold: the outbox row's created_at (the seat service's transaction), the inbox row's
 * appended_at (the Kafka record's timestamp, set when Connect produced it), received_at (the
 * consumer's transaction that took the event) and, for emails, completed_at (the SMTP server
 * accepted it). created_at is the writing transaction's start, a little before its commit.
 */
import type { Pool } from '../lib/postgres.js';
import { percentiles } from '../lib/percentiles.js';
import type { StageLatency } from './record.js';

/** One event as one consumer took it: epoch ms of each step (null where the step was not recorded). */
export interface EventTimes {
  consumer: string;
  eventId: string;
  /** The outbox row's created_at: the seat service's transaction. */
  created: number;
  /** The Kafka record's timestamp (Connect produced it); null in rows written before it was kept. */
  appended: number | null;
  /** The consumer's transaction that took the event. */
  received: number;
  /** The SMTP server accepted the email; null for every other consumer. */
  completed: number | null;
}

/** The steps between a commit and its effect, each the time from one recorded step to the next. */
export const STEP_STAGES: readonly { stage: string; of: (e: EventTimes) => number | undefined }[] = [
  {
    stage: 'commit → Kafka (Debezium, Connect, broker)',
    of: (e) => (e.appended === null ? undefined : e.appended - e.created),
  },
  {
    stage: 'Kafka → consumer (fetch, decode, inbox)',
    of: (e) => (e.appended === null ? undefined : e.received - e.appended),
  },
  {
    stage: 'consumer → email accepted (SMTP)',
    of: (e) => (e.completed === null ? undefined : e.completed - e.received),
  },
];

/** Commit → effect: to the email's acceptance where there is one, else to the consumer's transaction. */
export function endToEndMs(e: EventTimes): number {
  return (e.completed ?? e.received) - e.created;
}

const STAGES: readonly { stage: string; of: (e: EventTimes) => number | undefined }[] = [
  ...STEP_STAGES,
  { stage: 'commit → effect (end to end)', of: endToEndMs },
];

/** Every event written since `since` that a consumer took, with the times of its steps. */
export async function eventTimes(seat: Pool, consumers: Pool, since: Date): Promise<EventTimes[]> {
  const outbox = await seat.query<{ id: string; at: number }>(
    /* sql */ `select id::text, (extract(epoch from created_at) * 1000)::float8 as at from outbox where created_at >= $1`,
    [since],
  );
  const created = new Map(outbox.rows.map((r) => [r.id, Number(r.at)]));
  const inbox = await consumers.query<{
    consumer: string;
    event_id: string;
    appended: unknown;
    received: unknown;
    completed: unknown;
  }>(
    /* sql */ `
    select consumer, event_id,
           (extract(epoch from appended_at) * 1000)::float8 as appended,
           (extract(epoch from received_at) * 1000)::float8 as received,
           (extract(epoch from completed_at) * 1000)::float8 as completed
      from inbox where received_at >= $1`,
    [since],
  );
  const events: EventTimes[] = [];
  for (const row of inbox.rows) {
    const at = created.get(row.event_id);
    if (at === undefined) continue;
    events.push({
      consumer: row.consumer,
      eventId: row.event_id,
      created: at,
      appended: nullableNumber(row.appended),
      received: Number(row.received),
      completed: nullableNumber(row.completed),
    });
  }
  return events;
}

/** The per-stage breakdown of these events, per consumer and stage. */
export function stageLatencies(events: readonly EventTimes[]): StageLatency[] {
  const samples = new Map<string, number[]>();
  for (const e of events) {
    for (const { stage, of } of STAGES) {
      const value = of(e);
      if (value === undefined) continue;
      const key = `${e.consumer}\u0000${stage}`;
      const values = samples.get(key);
      if (values === undefined) samples.set(key, [value]);
      else values.push(value);
    }
  }
  const result: StageLatency[] = [];
  for (const consumer of [...new Set(events.map((e) => e.consumer))].sort()) {
    for (const { stage } of STAGES) {
      const values = samples.get(`${consumer}\u0000${stage}`);
      if (values === undefined) continue;
      const p = percentiles(values.map(Math.round));
      result.push({ consumer, stage, p50: p.p50, p99: p.p99, max: p.max, count: p.count });
    }
  }
  return result;
}

function nullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}
