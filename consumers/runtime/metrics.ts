/** The runtime's Prometheus metrics, fed by its lifecycle events (one subscriber, one place). */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { RuntimeEvents } from './lifecycle.js';

/**
 * `deadlineMs`: the consumer's EVENT_DEADLINE_MS, exposed so that the backlog alert can judge an
 * event's wait against it.
 */
export function registerConsumerMetrics(
  registry: Registry,
  consumer: string,
  events: RuntimeEvents,
  deadlineMs: number,
): void {
  const registers = [registry];
  const processed = new Counter({
    name: 'consumer_events_processed_total',
    help: 'Events whose effects were applied.',
    labelNames: ['consumer', 'topic', 'type'],
    registers,
  });
  const duplicates = new Counter({
    name: 'consumer_duplicates_skipped_total',
    help: 'Redelivered events the inbox already had: nothing changed.',
    labelNames: ['consumer', 'topic'],
    registers,
  });
  const skipped = new Counter({
    name: 'consumer_events_skipped_total',
    help: 'Events of types this consumer does not handle.',
    labelNames: ['consumer', 'topic'],
    registers,
  });
  const retries = new Counter({
    name: 'consumer_retries_total',
    help: 'Retries of a record or batch after a failure; kind: infrastructure, poison or handler_bug.',
    labelNames: ['consumer', 'topic', 'kind'],
    registers,
  });
  const deadLettered = new Counter({
    name: 'consumer_dead_lettered_total',
    help: 'Records sent to the dead letter topic.',
    labelNames: ['consumer', 'topic', 'reason'],
    registers,
  });
  const batchDuration = new Histogram({
    name: 'consumer_batch_duration_seconds',
    help: 'Time to process one partition batch; a batch whose partition is held for a retry ends at the hold.',
    labelNames: ['consumer', 'topic'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers,
  });
  const eventAge = new Histogram({
    name: 'consumer_event_age_seconds',
    help: 'Age of each applied event when applied: now minus ce_time.',
    labelNames: ['consumer', 'topic'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400],
    registers,
  });
  const lastAge = new Gauge({
    name: 'consumer_last_event_age_seconds',
    help: 'Age of the last event applied, per partition.',
    labelNames: ['consumer', 'topic', 'partition'],
    registers,
  });
  const lag = new Gauge({
    name: 'consumer_lag_records',
    help: 'Records behind the partition high watermark after the last commit.',
    labelNames: ['consumer', 'topic', 'partition'],
    registers,
  });

  const failingAge = new Gauge({
    name: 'consumer_failing_event_age_seconds',
    help: 'While a partition is held by an infrastructure failure: age of the oldest event held (from ce_time), labelled with the failure code.',
    labelNames: ['consumer', 'topic', 'partition', 'error'],
    registers,
  });
  const pastDeadline = new Gauge({
    name: 'consumer_failing_past_deadline',
    help: '1 while a partition is held by a failure and an event held is past its deadline, labelled with the failure code.',
    labelNames: ['consumer', 'topic', 'partition', 'error'],
    registers,
  });
  const handlerBug = new Gauge({
    name: 'consumer_handler_bug',
    help: "1 while a partition is held by a bug in the consumer's own code (TypeError, ReferenceError, …); 0 while held by another failure.",
    labelNames: ['consumer', 'topic', 'partition'],
    registers,
  });
  new Gauge({
    name: 'consumer_event_deadline_seconds',
    help: "How late this consumer's effects may be (EVENT_DEADLINE_MS).",
    labelNames: ['consumer'],
    registers,
  }).set({ consumer }, deadlineMs / 1000);
  /** Per partition (`topic/partition`): since when its oldest event not yet handled has been waiting. */
  const waitingSince = new Map<string, { topic: string; partition: string; sinceMs: number }>();
  new Gauge({
    name: 'consumer_oldest_waiting_event_age_seconds',
    help: 'Per partition, age (from ce_time, or its redrive) of the oldest fetched event not yet handled: an unsent email, an unapplied change; absent when none waits.',
    labelNames: ['consumer', 'topic', 'partition'],
    registers,
    collect() {
      this.reset();
      const now = Date.now();
      for (const { topic, partition, sinceMs } of waitingSince.values())
        this.set({ consumer, topic, partition }, Math.max(0, now - sinceMs) / 1000);
    },
  });
  events.on('waiting', ({ topic, partition, sinceMs }) => {
    const key = `${topic}/${partition}`;
    if (sinceMs === undefined) waitingSince.delete(key);
    else waitingSince.set(key, { topic, partition: String(partition), sinceMs });
  });
  // A rebalance hands partitions to others: what this member waited on is theirs now.
  events.on('groupJoined', () => waitingSince.clear());
  /** The failure code now shown per partition, so a new code replaces the old series. */
  const shownCode = new Map<string, string>();
  const clearFailing = (topic: string, partition: string) => {
    const code = shownCode.get(`${topic}/${partition}`);
    if (code === undefined) return;
    failingAge.remove({ consumer, topic, partition, error: code });
    pastDeadline.remove({ consumer, topic, partition, error: code });
    shownCode.delete(`${topic}/${partition}`);
    handlerBug.remove({ consumer, topic, partition });
  };
  events.on('failing', ({ topic, partition, kind, code, oldestEventAgeMs, pastDeadline: past }) => {
    const p = String(partition);
    handlerBug.set({ consumer, topic, partition: p }, kind === 'handler-bug' ? 1 : 0);
    if (shownCode.get(`${topic}/${p}`) !== code) clearFailing(topic, p);
    shownCode.set(`${topic}/${p}`, code);
    failingAge.set({ consumer, topic, partition: p, error: code }, oldestEventAgeMs / 1000);
    pastDeadline.set({ consumer, topic, partition: p, error: code }, past ? 1 : 0);
  });
  events.on('recovered', ({ topic, partition }) => clearFailing(topic, String(partition)));
  events.on('applied', ({ topic, type, count }) => processed.inc({ consumer, topic, type }, count));
  events.on('duplicate', ({ topic, count }) => duplicates.inc({ consumer, topic }, count));
  events.on('skipped', ({ topic }) => skipped.inc({ consumer, topic }));
  events.on('retry', ({ topic, kind }) => retries.inc({ consumer, topic, kind: kind.replaceAll('-', '_') }));
  events.on('deadLettered', ({ topic, reason }) => deadLettered.inc({ consumer, topic, reason }));
  events.on('batchFinished', ({ topic, durationMs }) => batchDuration.observe({ consumer, topic }, durationMs / 1000));
  events.on('eventHandled', ({ topic, partition, ageMs }) => {
    eventAge.observe({ consumer, topic }, ageMs / 1000);
    lastAge.set({ consumer, topic, partition: String(partition) }, ageMs / 1000);
  });
  events.on('partitionProgress', ({ topic, partition, lag: behind }) =>
    lag.set({ consumer, topic, partition: String(partition) }, behind),
  );
}
