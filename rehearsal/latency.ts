/**
 * Commit → effect latency per consumer, from what the databases hold: the outbox row's
 * created_at against the inbox row's received_at. Per second of received_at (the charts) and for
 * the whole run (the text report).
 */
import type { Pool } from '../lib/postgres.js';
import { percentiles } from '../lib/percentiles.js';
import { FRESH_LIMIT_MS } from './freshness.js';
import type { LatencyPoint } from './record.js';

export interface ConsumerLatency {
  consumer: string;
  points: LatencyPoint[];
  overall: { p50: number; p99: number; max: number; count: number };
  /** When each event that took FRESH_LIMIT_MS or more reached the consumer (time to fresh, freshness.ts). */
  slowAt: number[];
  /** When each event reached it. */
  receivedAt: number[];
}

export async function latencyOverTime(seat: Pool, consumers: Pool, since: Date): Promise<ConsumerLatency[]> {
  const outbox = await seat.query<{ id: string; at: number }>(
    /* sql */ `select id::text, (extract(epoch from created_at) * 1000)::float8 as at from outbox where created_at >= $1`,
    [since],
  );
  const written = new Map(outbox.rows.map((r) => [r.id, Number(r.at)]));
  const inbox = await consumers.query<{ consumer: string; event_id: string; at: number }>(
    /* sql */ `select consumer, event_id, (extract(epoch from received_at) * 1000)::float8 as at from inbox where received_at >= $1`,
    [since],
  );
  const perConsumer = new Map<string, Map<number, number[]>>();
  const slowAt = new Map<string, number[]>();
  const receivedAt = new Map<string, number[]>();
  const add = (to: Map<string, number[]>, consumer: string, at: number) => {
    const list = to.get(consumer) ?? [];
    list.push(at);
    to.set(consumer, list);
  };
  for (const row of inbox.rows) {
    const created = written.get(row.event_id);
    if (created === undefined) continue;
    const received = Number(row.at);
    add(receivedAt, row.consumer, received);
    if (received - created >= FRESH_LIMIT_MS) add(slowAt, row.consumer, received);
    const second = Math.floor(received / 1000) * 1000;
    const bySecond = perConsumer.get(row.consumer) ?? new Map<number, number[]>();
    const values = bySecond.get(second) ?? [];
    values.push(Math.max(0, received - created));
    bySecond.set(second, values);
    perConsumer.set(row.consumer, bySecond);
  }
  return [...perConsumer.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([consumer, bySecond]) => {
      const points = [...bySecond.entries()]
        .sort(([a], [b]) => a - b)
        .map(([at, values]) => {
          const p = percentiles(values);
          return { at, p50: Math.round(p.p50), p99: Math.round(p.p99), count: p.count };
        });
      const all = percentiles([...bySecond.values()].flat());
      return {
        consumer,
        points,
        overall: { p50: Math.round(all.p50), p99: Math.round(all.p99), max: Math.round(all.max), count: all.count },
        slowAt: slowAt.get(consumer) ?? [],
        receivedAt: receivedAt.get(consumer) ?? [],
      };
    });
}
