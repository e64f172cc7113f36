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

interface InboxTimes {
  consumer: string;
  event_id: string;
  appended: number | null;
  received: number;
  completed: number | null;
}

const STAGES: { stage: string; of: (created: number, row: InboxTimes) => number | undefined }[] = [
  {
    stage: 'commit → Kafka (Debezium, Connect, broker)',
    of: (created, row) => (row.appended === null ? undefined : row.appended - created),
  },
  {
    stage: 'Kafka → consumer (fetch, decode, inbox)',
    of: (_created, row) => (row.appended === null ? undefined : row.received - row.appended),
  },
  {
    stage: 'consumer → email accepted (SMTP)',
    of: (_created, row) => (row.completed === null ? undefined : row.completed - row.received),
  },
  { stage: 'commit → effect (end to end)', of: (created, row) => (row.completed ?? row.received) - created },
];

/** The per-stage breakdown of the events written since `since`, per consumer and stage. */
export async function stageLatencies(seat: Pool, consumers: Pool, since: Date): Promise<StageLatency[]> {
  const outbox = await seat.query<{ id: string; at: number }>(
    /* sql */ `select id::text, extract(epoch from created_at) * 1000 as at from outbox where created_at >= $1`,
    [since],
  );
  const created = new Map(outbox.rows.map((r) => [r.id, Number(r.at)]));
  const inbox = await consumers.query<InboxTimes>(
    /* sql */ `
    select consumer, event_id,
           extract(epoch from appended_at) * 1000 as appended,
           extract(epoch from received_at) * 1000 as received,
           extract(epoch from completed_at) * 1000 as completed
      from inbox where received_at >= $1`,
    [since],
  );
  const samples = new Map<string, number[]>();
  for (const row of inbox.rows) {
    const at = created.get(row.event_id);
    if (at === undefined) continue;
    const times: InboxTimes = {
      ...row,
      appended: nullableNumber(row.appended),
      received: Number(row.received),
      completed: nullableNumber(row.completed),
    };
    for (const { stage, of } of STAGES) {
      const value = of(at, times);
      if (value === undefined) continue;
      const key = `${row.consumer}\u0000${stage}`;
      const values = samples.get(key);
      if (values === undefined) samples.set(key, [value]);
      else values.push(value);
    }
  }
  const result: StageLatency[] = [];
  for (const consumer of [...new Set(inbox.rows.map((r) => r.consumer))].sort()) {
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
