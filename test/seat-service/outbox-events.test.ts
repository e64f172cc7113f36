import { CloudEvent, Kafka as CloudEventsKafka, type KafkaMessage as CloudEventsKafkaMessage } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import { EVENTS, readEventSchema } from '../../events/catalogue.js';
import { PipelineError } from '../../lib/errors.js';
import { createSchemaRegistry, decodeWithSchema, registerAvroSchema } from '../../lib/schema-registry.js';
import { waitFor } from '../../lib/wait.js';
import { createEventWriter } from '../../seat-service/event-writer.js';
import { seatId } from '../../seat-service/inventory.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, useSeatPipeline, type CollectedRecord } from '../support/seat-pipeline.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();

describe('seat service outbox routed by Debezium as CloudEvents', () => {
  const show = 'show1';
  const pipeline = useSeatPipeline(show, { section: 'A', rows: 2, seatsPerRow: 5, priceCents: 4500 });

  it('hold, confirm and release each publish CloudEvents with every ce_* header, the outbox id and a registry-decodable value', async () => {
    const collector = await collectRecords([pipeline().topics.seat, pipeline().topics.order]);
    try {
      const held = await pipeline().service.hold({ showId: show, seatIds: [seatId(show, 'A', 1, 1), seatId(show, 'A', 1, 2)], buyerId: 'buyer-1' });
      expect(held.status).toBe('held');
      if (held.status !== 'held') return;
      const confirmed = await pipeline().service.confirm({ holdId: held.holdId, buyerEmail: 'b1@example.test' });
      expect(confirmed.status).toBe('confirmed');
      const second = await pipeline().service.hold({ showId: show, seatIds: [seatId(show, 'A', 2, 1)], buyerId: 'buyer-2' });
      if (second.status !== 'held') throw new Error(`expected a hold, got ${second.status}`);
      const released = await pipeline().service.release(second.holdId);
      expect(released.status).toBe('released');

      const outbox = await adminQuery(pipeline().adminUrl, 'select id, type, aggregateid, aggregatetype, payload from outbox order by created_at');
      expect(outbox.rows).toHaveLength(2 + 3 + 1 + 1); // 2 held, 2 sold + order, 1 held, 1 released
      const records = await waitFor(() => (collector.records.length >= outbox.rows.length ? collector.records : undefined), {
        timeoutMs: 30_000, description: `${outbox.rows.length} records on the event topics`,
      });

      const registry = createSchemaRegistry(stack.registryUrl);
      for (const row of outbox.rows) {
        const record = records.find((r) => r.headers.ce_id === row.id);
        expect(record, `record for outbox row ${row.id}`).toBeDefined();
        if (!record) continue;
        expect(record.topic).toBe(`${pipeline().connector.topicPrefix}.${row.aggregatetype}`);
        expect(record.key).toBe(row.aggregateid);
        expect(record.headers).toMatchObject({
          ce_id: row.id, ce_type: row.type, ce_source: '/stagefront/seat-service', ce_specversion: '1.0',
          ce_subject: row.aggregateid, 'content-type': 'application/avro',
        });
        expect(new Date(record.headers.ce_time ?? '').getTime()).not.toBeNaN();
        expect(record.value.equals(row.payload)).toBe(true);
        const decoded = await decodeWithSchema<Record<string, unknown>>(registry, record.value);
        const keyField = Object.values(EVENTS).find((e) => e.type === row.type)?.keyField ?? '';
        expect(decoded[keyField]).toBe(row.aggregateid);
        const event = toCloudEvent(record);
        expect(event.validate()).toBe(true);
        expect(event.id).toBe(row.id);
        expect(event.type).toBe(row.type);
      }
    } finally {
      await collector.stop();
    }
  });
});

describe('schemas are registered BACKWARD_TRANSITIVE: a new version must read every older one', () => {
  const base = JSON.parse(readEventSchema('seatHeld')) as { fields: unknown[] };
  const withFields = (...extra: unknown[]) => JSON.stringify({ ...base, fields: [...base.fields, ...extra] });
  const v1 = withFields({ name: 'note', type: 'string' });
  const v2 = withFields(); // drops note: reads v1 data (the field is skipped)
  const v3 = withFields({ name: 'note', type: 'int', default: 0 }); // reads v2 data (default), not v1's string

  it('a change compatible with the latest version but not with an older one stops the producer at start', async () => {
    const registry = createSchemaRegistry(stack.registryUrl);
    const subjectPrefix = `${uniqueName('transitive')}.`;
    const start = (seatHeld: string) => createEventWriter(registry, { subjectPrefix, readSchema: (name) => (name === 'seatHeld' ? seatHeld : readEventSchema(name)) });
    await start(v1);
    await start(v2);
    const refused = start(v3);
    await expect(refused).rejects.toThrow(PipelineError);
    await expect(refused).rejects.toThrow(`${subjectPrefix}${EVENTS.seatHeld.subject} is not BACKWARD_TRANSITIVE compatible`);
    await expect(refused).rejects.toThrow(/field "note" changed type from "string" to "int" \(against version 1\)/);
    // The same change under plain BACKWARD (the latest version only) would have been taken.
    const backwardSubject = `${uniqueName('backward')}.${EVENTS.seatHeld.subject}`;
    for (const version of [v1, v2]) await registerAvroSchema(registry, backwardSubject, version, 'BACKWARD');
    await expect(registerAvroSchema(registry, backwardSubject, v3, 'BACKWARD')).resolves.toBeGreaterThan(0);
  });
});

function toCloudEvent(record: CollectedRecord): CloudEvent<unknown> {
  const message: CloudEventsKafkaMessage = {
    key: record.key,
    value: record.value,
    headers: record.headers,
    body: record.value,
    timestamp: record.message.timestamp,
  };
  return CloudEventsKafka.toEvent(message) as CloudEvent<unknown>;
}
