/**
 * Commit → effect latency per consumer, from what the databases hold: the outbox row's
 * created_at against the inbox row's received_at. Per second of received_at (the charts) and for
 * the whole run (the text report).
 */
import { percentiles } from '../lib/percentiles.js';
import { FRESH_LIMIT_MS } from './freshness.js';
import type { LatencyPoint } from './record.js';
import type { EventTimes } from './stages.js';

export interface ConsumerLatency {
  consumer: string;
  points: LatencyPoint[];
  overall: { p50: number; p99: number; max: number; count: number };
  /** When each event that took FRESH_LIMIT_MS or more reached the consumer (time to fresh, freshness.ts). */
  slowAt: number[];
  /** When each event reached it. */
  receivedAt: number[];
}

export function latencyOverTime(events: readonly EventTimes[]): ConsumerLatency[] {
  const perConsumer = new Map<string, Map<number, number[]>>();
  const slowAt = new Map<string, number[]>();
  const receivedAt = new Map<string, number[]>();
  const add = (to: Map<string, number[]>, consumer: string, at: number) => {
    const list = to.get(consumer) ?? [];
    list.push(at);
    to.set(consumer, list);
  };
  for (const { consumer, created, received } of events) {
    add(receivedAt, consumer, received);
    if (received - created >= FRESH_LIMIT_MS) add(slowAt, consumer, received);
    const second = Math.floor(received / 1000) * 1000;
    const bySecond = perConsumer.get(consumer) ?? new Map<number, number[]>();
    const values = bySecond.get(second) ?? [];
    values.push(Math.max(0, received - created));
    bySecond.set(second, values);
    perConsumer.set(consumer, bySecond);
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
