import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RuntimeEvents } from '../../consumers/runtime/lifecycle.js';
import { registerConsumerMetrics } from '../../consumers/runtime/metrics.js';
import { createMetricsRegistry, serveHttp } from '../../lib/metrics.js';
import { waitFor } from '../../lib/wait.js';
import { type CloudEventRecord, produceCloudEvents, registerTestSchema } from '../support/cloudevent-records.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import {
  COUNTED_TYPE,
  appliedRows,
  assertKeyOrder,
  countedConsumer,
  countedSchemaV1,
  createAppliedEventsTable,
} from './helpers/counted-events.js';
import { metricValue, scrapeMetrics } from './helpers/metrics.js';
import {
  FAST_POLICY,
  connectedProducer,
  consumerDatabase,
  createTopics,
  startTrackedConsumer,
  testKafka,
  testLogger,
  testRegistry,
} from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();

describe('the runtime applies each event once', () => {
  it('skips a republished ce_id and a redelivery after offsets go back, and the metrics endpoint shows the counts', async () => {
    const name = uniqueName('idem');
    const began = Date.now();
    const topic = `${name}.seat`;
    const kafka = testKafka(stack, name);
    const registry = testRegistry(stack);
    await createTopics(kafka, [topic], 3);
    const db = await consumerDatabase('idem');
    await createAppliedEventsTable(db.pool);
    const schemaId = await registerTestSchema(registry, `${name}.Counted`, countedSchemaV1(name));
    const { producer, close: closeProducer } = await connectedProducer(kafka);

    const events: CloudEventRecord[] = [];
    for (let seq = 0; seq < 4; seq += 1) {
      for (let k = 0; k < 5; k += 1)
        events.push({
          type: COUNTED_TYPE,
          key: `k${k}`,
          schemaId,
          id: randomUUID(),
          payload: { key: `k${k}`, seq, behaviour: 'apply' },
        });
    }
    const republished = events.slice(0, 3);
    await produceCloudEvents(producer, registry, topic, [...events, republished[0]!]);

    const metrics = createMetricsRegistry('idem-test');
    const lifecycle = new RuntimeEvents();
    registerConsumerMetrics(metrics, name, lifecycle, 60_000);
    const http = await serveHttp({ registry: metrics, port: 0 });
    const closeHttp = track('metrics endpoint', () => http.close());
    const options = {
      definition: countedConsumer(name, [topic]),
      kafka,
      groupId: name,
      registry,
      pool: db.pool,
      logger: testLogger(name),
      policy: FAST_POLICY,
      events: lifecycle,
    };

    const first = await startTrackedConsumer(options);
    await waitFor(async () => (await appliedRows(db.pool, name)).length === 20, {
      timeoutMs: 30_000,
      description: '20 events applied',
    });
    await produceCloudEvents(producer, registry, topic, republished.slice(1));
    await waitFor(async () => metricValue(await scrapeMetrics(http.url), 'consumer_duplicates_skipped_total') === 3, {
      timeoutMs: 30_000,
      description: 'the 3 republished events skipped',
    });
    await first.close();

    // A crash before the commit looks like this to the next consumer: offsets behind what was applied.
    const admin = kafka.admin();
    await admin.connect();
    await admin.resetOffsets({ groupId: name, topic, earliest: true });
    await admin.disconnect();
    const second = await startTrackedConsumer(options);
    await waitFor(
      async () => metricValue(await scrapeMetrics(http.url), 'consumer_duplicates_skipped_total') === 3 + 23,
      { timeoutMs: 30_000, description: 'all 23 records redelivered and skipped' },
    );
    await second.close();

    const rows = await appliedRows(db.pool, name);
    expect(rows).toHaveLength(20);
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(20);
    assertKeyOrder(rows);
    const text = await scrapeMetrics(http.url);
    expect(metricValue(text, 'consumer_events_processed_total', { consumer: name, type: COUNTED_TYPE })).toBe(20);
    expect(metricValue(text, 'consumer_dead_lettered_total')).toBe(0);
    expect(metricValue(text, 'consumer_batch_duration_seconds_count')).toBeGreaterThan(0);
    expect(metricValue(text, 'consumer_event_age_seconds_count')).toBe(20);
    expect(metricValue(text, 'consumer_lag_records', { topic })).toBe(0);
    expect(text).toMatch(/consumer_lag_records\{[^}]*partition="2"/);
    const inbox = await db.pool.query('select count(*)::int as n from inbox where consumer = $1', [name]);
    expect(inbox.rows[0]).toEqual({ n: 20 });
    // The Kafka timestamp of each record is kept beside received_at: the rehearsal's stage breakdown reads it.
    const stamped = await db.pool.query<{ appended: number; received: number }>(
      'select extract(epoch from appended_at) * 1000 as appended, extract(epoch from received_at) * 1000 as received from inbox where consumer = $1',
      [name],
    );
    for (const row of stamped.rows) {
      expect(Number(row.appended)).toBeGreaterThanOrEqual(began - 1000);
      expect(Number(row.appended)).toBeLessThanOrEqual(Number(row.received) + 1000);
    }
    await Promise.all([db.close(), closeProducer(), closeHttp()]);
  });
});
