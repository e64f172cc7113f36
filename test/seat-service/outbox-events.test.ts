import { CloudEvent, Kafka as CloudEventsKafka, type KafkaMessage as CloudEventsKafkaMessage } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import avro from 'avsc';
import { randomUUID } from 'node:crypto';
import { decodeCloudEvent } from '../../consumers/runtime/cloud-event.js';
import type { SourceRecord } from '../../consumers/runtime/types.js';
import { EVENTS, type EventName, readEventSchema, releasedEventSchemas } from '../../events/catalogue.js';
import { catalogueEventTypes } from '../../consumers/payloads.js';
import { buildEventContract } from '../../events/contract.js';
import { PipelineError } from '../../lib/errors.js';
import { parseSettings } from '../../lib/settings.js';
import {
  createSchemaRegistry,
  decodeWithSchema,
  registerAvroSchema,
  wireSchemaId,
  type Registry,
} from '../../lib/schema-registry.js';
import { waitFor } from '../../lib/wait.js';
import { createEventWriter, dataSchemaUrl } from '../../seat-service/event-writer.js';
import { seatId } from '../../seat-service/inventory.js';
import { openSeatService } from '../../seat-service/service.js';
import { seatServiceSettings } from '../../seat-service/settings.js';
import { CE_ID_PATTERN } from '../../consumers/runtime/cloud-event-checks.js';
import { cloudEventMessage } from '../support/cloudevent-records.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, testLogger, useSeatPipeline, type CollectedRecord } from '../support/seat-pipeline.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();
const contractHeaders = buildEventContract()
  .headers.map((h) => h.name)
  .sort();

describe('seat service outbox routed by Debezium as CloudEvents', () => {
  const show = 'show1';
  const pipeline = useSeatPipeline(show, { section: 'A', rows: 2, seatsPerRow: 5, priceCents: 4500 });

  it('hold, confirm and release each publish CloudEvents with every ce_* header, the outbox id and a registry-decodable value', async () => {
    const collector = await collectRecords([pipeline().topics.seat, pipeline().topics.order]);
    try {
      const held = await pipeline().service.hold({
        showId: show,
        seatIds: [seatId(show, 'A', 1, 1), seatId(show, 'A', 1, 2)],
        buyerId: 'buyer-1',
      });
      expect(held.status).toBe('held');
      if (held.status !== 'held') return;
      const confirmed = await pipeline().service.confirm({ holdId: held.holdId, buyerEmail: 'b1@example.test' });
      expect(confirmed.status).toBe('confirmed');
      const second = await pipeline().service.hold({
        showId: show,
        seatIds: [seatId(show, 'A', 2, 1)],
        buyerId: 'buyer-2',
      });
      if (second.status !== 'held') throw new Error(`expected a hold, got ${second.status}`);
      const released = await pipeline().service.release(second.holdId);
      expect(released.status).toBe('released');

      const outbox = await adminQuery(
        pipeline().adminUrl,
        'select id, type, aggregateid, aggregatetype, payload from outbox order by created_at',
      );
      expect(outbox.rows).toHaveLength(2 + 3 + 1 + 1); // 2 held, 2 sold + order, 1 held, 1 released
      const records = await waitFor(
        () => (collector.records.length >= outbox.rows.length ? collector.records : undefined),
        {
          timeoutMs: 30_000,
          description: `${outbox.rows.length} records on the event topics`,
        },
      );

      // Where each seat is, from the seats table: the seat events carry it (version 2 of their schemas).
      const places = new Map(
        (
          await adminQuery(
            pipeline().adminUrl,
            'select seat_id, row_label as row, seat_number from seats where show_id = $1',
            [show],
          )
        ).rows.map((seat) => [seat.seat_id, { row: seat.row, seat_number: seat.seat_number }]),
      );
      const registry = createSchemaRegistry(stack.registryUrl);
      for (const row of outbox.rows) {
        const record = records.find((r) => r.headers.ce_id === row.id);
        expect(record, `record for outbox row ${row.id}`).toBeDefined();
        if (!record) continue;
        expect(record.topic).toBe(`${pipeline().connector.topicPrefix}.${row.aggregatetype}`);
        expect(record.key).toBe(row.aggregateid);
        expect(record.headers).toMatchObject({
          ce_id: row.id,
          ce_type: row.type,
          ce_source: '/stagefront/seat-service',
          ce_specversion: '1.0',
          ce_subject: row.aggregateid,
          'content-type': 'application/avro',
        });
        expect(new Date(record.headers.ce_time ?? '').getTime()).not.toBeNaN();
        expect(record.value.equals(row.payload)).toBe(true);
        const decoded = await decodeWithSchema<Record<string, unknown>>(registry, record.value);
        const keyField = Object.values(EVENTS).find((e) => e.type === row.type)?.keyField ?? '';
        expect(decoded[keyField]).toBe(row.aggregateid);
        if (row.aggregatetype === 'seat')
          expect({ row: decoded.row, seat_number: decoded.seat_number }, row.type).toEqual(places.get(row.aggregateid));
        const event = toCloudEvent(record);
        expect(event.validate()).toBe(true);
        expect(event.id).toBe(row.id);
        expect(event.type).toBe(row.type);
        await expectDataSchemaServesWriterSchema(record);
        // The published contract (events/asyncapi.yaml, docs/event-contract.md) names exactly these headers.
        expect(
          Object.keys(record.headers)
            .filter((name) => !name.startsWith('__debezium.'))
            .sort(),
        ).toEqual(contractHeaders);
        expect(event.dataschema).toBe(record.headers.ce_dataschema);
        await expectFixtureLikeRecord(registry, record, decoded);
      }
    } finally {
      await collector.stop();
    }
  });

  it('an outbox row without ce_dataschema (written before the column existed) still flows: no dataschema, the consumer decodes it', async () => {
    const collector = await collectRecords([pipeline().topics.seat]);
    try {
      const held = await pipeline().service.hold({
        showId: show,
        seatIds: [seatId(show, 'A', 2, 5)],
        buyerId: 'buyer-old-row',
      });
      if (held.status !== 'held') throw new Error(`expected a hold, got ${held.status}`);
      const oldRowId = randomUUID();
      await adminQuery(
        pipeline().adminUrl,
        /* sql */ `
        insert into outbox (id, aggregatetype, aggregateid, type, payload, ce_source, ce_time, ce_subject, content_type)
        select $1, aggregatetype, aggregateid, type, payload, ce_source, ce_time, ce_subject, content_type from outbox where id = $2`,
        [oldRowId, held.eventIds[0]],
      );
      const record = await waitFor(() => collector.records.find((r) => r.headers.ce_id === oldRowId), {
        timeoutMs: 30_000,
        description: "the old row's record",
      });
      // The router writes a header without a value for the null column; the runtime reads it as absent.
      expect(record.message.headers?.ce_dataschema ?? null).toBeNull();
      const registry = createSchemaRegistry(stack.registryUrl);
      const spec = { whenLate: 'keep-retrying' as const, parse: (payload: unknown) => payload };
      const consumed = await decodeCloudEvent(registry, sourceRecord(record), { [EVENTS.seatHeld.type]: spec });
      expect(consumed?.id).toBe(oldRowId);
      expect(consumed?.dataschema).toBeUndefined();
      expect(consumed?.payload).toMatchObject({ seat_id: seatId(show, 'A', 2, 5), buyer_id: 'buyer-old-row' });
      const current = collector.records.find((r) => r.headers.ce_id === held.eventIds[0]);
      if (current === undefined) throw new Error("the new row's record is missing");
      expect(
        (await decodeCloudEvent(registry, sourceRecord(current), { [EVENTS.seatHeld.type]: spec }))?.dataschema,
      ).toBe(current.headers.ce_dataschema);
    } finally {
      await collector.stop();
    }
  });

  it('SCHEMA_REGISTRY_PUBLIC_URL, when set, is the base of ce_dataschema instead of SCHEMA_REGISTRY_URL', async () => {
    const publicBase = 'https://registry.stagefront.test/apis/ccompat/v7/';
    const env = {
      SEAT_DB_URL: pipeline().databaseUrl,
      SEAT_DB_ADMIN_URL: pipeline().adminUrl,
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      SEAT_SERVICE_DB_PASSWORD: 'unused',
      DEBEZIUM_DB_PASSWORD: 'unused',
    };
    const config = parseSettings(seatServiceSettings, { ...env, SCHEMA_REGISTRY_PUBLIC_URL: publicBase });
    expect(parseSettings(seatServiceSettings, env).registryPublicUrl).toBe('');
    expect(() => parseSettings(seatServiceSettings, { ...env, SCHEMA_REGISTRY_PUBLIC_URL: 'registry:8080' })).toThrow(
      /SCHEMA_REGISTRY_PUBLIC_URL="registry:8080" is not valid: expected a URL starting with http:\/\/ or https:\/\/, or empty/,
    );
    const service = await openSeatService(config, testLogger);
    try {
      const held = await service.hold({
        showId: show,
        seatIds: [seatId(show, 'A', 2, 4)],
        buyerId: 'buyer-public-url',
      });
      if (held.status !== 'held') throw new Error(`expected a hold, got ${held.status}`);
      const { rows } = await adminQuery(
        pipeline().adminUrl,
        'select ce_dataschema, payload from outbox where id = $1',
        [held.eventIds[0]],
      );
      expect(rows[0].ce_dataschema).toBe(
        `https://registry.stagefront.test/apis/ccompat/v7/schemas/ids/${wireSchemaId(rows[0].payload as Buffer)}`,
      );
    } finally {
      await service.close();
    }
  });
});

/** ce_dataschema is `<registry>/schemas/ids/<id>` with the id of the value's framing, and serves the schema the value decodes with. */
async function expectDataSchemaServesWriterSchema(record: CollectedRecord): Promise<void> {
  const schemaId = wireSchemaId(record.value);
  const url = record.headers.ce_dataschema ?? '';
  expect(url).toBe(`${stack.registryUrl}/schemas/ids/${schemaId}`);
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  expect(response.status, url).toBe(200);
  const { schema } = (await response.json()) as { schema: string };
  const writer = avro.Type.forSchema(JSON.parse(schema) as avro.Schema);
  const decoded = writer.fromBuffer(record.value.subarray(5)) as Record<string, unknown>;
  const definition = Object.values(EVENTS).find((e) => e.type === record.headers.ce_type);
  expect(writer.name).toBe(definition?.subject);
  expect(decoded[definition?.keyField ?? '']).toBe(record.key);
}

function sourceRecord(record: CollectedRecord): SourceRecord {
  const { message } = record;
  return {
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    key: message.key,
    value: message.value,
    headers: message.headers ?? {},
    timestamp: message.timestamp,
  };
}

describe('schemas are registered BACKWARD_TRANSITIVE: a new version must read every older one', () => {
  const base = JSON.parse(readEventSchema('seatHeld')) as { fields: unknown[] };
  const withFields = (...extra: unknown[]) => JSON.stringify({ ...base, fields: [...base.fields, ...extra] });
  const v1 = withFields({ name: 'note', type: 'string' });
  const v2 = withFields(); // drops note: reads v1 data (the field is skipped)
  const v3 = withFields({ name: 'note', type: 'int', default: 0 }); // reads v2 data (default), not v1's string

  it('a change compatible with the latest version but not with an older one stops the producer at start', async () => {
    const registry = createSchemaRegistry(stack.registryUrl);
    const subjectPrefix = `${uniqueName('transitive')}.`;
    const start = (seatHeld: string) =>
      createEventWriter(registry, {
        subjectPrefix,
        readSchema: (name) => (name === 'seatHeld' ? seatHeld : readEventSchema(name)),
      });
    await start(v1);
    await start(v2);
    const refused = start(v3);
    await expect(refused).rejects.toThrow(PipelineError);
    await expect(refused).rejects.toThrow(
      `${subjectPrefix}${EVENTS.seatHeld.subject} is not BACKWARD_TRANSITIVE compatible`,
    );
    await expect(refused).rejects.toThrow(/field "note" changed type from "string" to "int" \(against version 1\)/);
    // The same change under plain BACKWARD (the latest version only) would have been taken.
    const backwardSubject = `${uniqueName('backward')}.${EVENTS.seatHeld.subject}`;
    for (const version of [v1, v2]) await registerAvroSchema(registry, backwardSubject, version, 'BACKWARD');
    await expect(registerAvroSchema(registry, backwardSubject, v3, 'BACKWARD')).resolves.toBeGreaterThan(0);
  });
});

describe('version 2 of the seat events (row and seat_number) rolls out over version 1, as the schema rules say', () => {
  it('a service with the new schemas starts where the old ones are registered, and consumers read both versions into the new shape', async () => {
    const registry = createSchemaRegistry(stack.registryUrl);
    const subjectPrefix = `${uniqueName('rollout')}.`;
    const versionOf = (version: number) => (name: EventName) =>
      releasedEventSchemas(name).find((release) => release.version === version)?.schema ?? readEventSchema(name);
    // Yesterday's service registered version 1 of every schema; today's registers the schema files.
    await createEventWriter(registry, { subjectPrefix, readSchema: versionOf(1) });
    await expect(createEventWriter(registry, { subjectPrefix })).resolves.toBeDefined();
    const subject = `${subjectPrefix}${EVENTS.seatSold.subject}`;
    const [v1, v2] = await Promise.all(
      [versionOf(1)('seatSold'), readEventSchema('seatSold')].map((schema) =>
        registerAvroSchema(registry, subject, schema, 'BACKWARD_TRANSITIVE'),
      ),
    );
    expect(v2).not.toBe(v1);

    // One sale written by each: a consumer of the catalogue (reader: the schema file) sees both in the new shape.
    const sold = { seat_id: 's:B-4-7', show_id: 's', section: 'B', order_id: 'o', price_cents: 4500, sold_at: 1 };
    const spec = catalogueEventTypes(['seatSold'], 'keep-retrying');
    const read = async (schemaId: number, payload: object) => {
      const message = await cloudEventMessage(registry, {
        type: EVENTS.seatSold.type,
        key: sold.seat_id,
        payload,
        schemaId,
      });
      const record: SourceRecord = {
        topic: 't',
        partition: 0,
        offset: '0',
        key: Buffer.from(sold.seat_id),
        value: message.value as Buffer,
        headers: message.headers,
        timestamp: String(Date.now()),
      };
      return (await decodeCloudEvent(registry, record, spec))?.payload;
    };
    expect(await read(v1 ?? -1, sold)).toEqual({ ...sold, row: null, seat_number: null });
    expect(await read(v2 ?? -1, { ...sold, row: '4', seat_number: 7 })).toEqual({ ...sold, row: '4', seat_number: 7 });
  });
});

/**
 * What a header's value looks like, not what it is: the form of ids, times, URLs and trace
 * contexts; fixed values and those that repeat the key or the id as they are.
 */
function headerShape(name: string, value: string, record: { key: string; id: string; schemaId: number }): string {
  if (name === 'id' || name === 'ce_id') return value === record.id ? 'the event id' : `not the event id: ${value}`;
  if (name === 'ce_subject') return value === record.key ? 'the key' : `not the key: ${value}`;
  if (name === 'ce_dataschema')
    return value === dataSchemaUrl(stack.registryUrl, record.schemaId)
      ? "the registry's URL of the value's schema id"
      : `not the value's schema URL: ${value}`;
  const forms: [string, RegExp][] = [
    ['a canonical uuid', new RegExp(CE_ID_PATTERN)],
    ['an RFC 3339 UTC time with milliseconds', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/],
    ['a W3C traceparent', /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/],
  ];
  return forms.find(([, form]) => form.test(value))?.[0] ?? value;
}

/**
 * The record fixture of the consumer tests (test/support/cloudevent-records.ts) made for the same
 * event as a record the real router wrote: the same key, the same header names in the same order,
 * each value of the same shape, and the same value bytes (the same Avro under the same schema id).
 */
async function expectFixtureLikeRecord(registry: Registry, record: CollectedRecord, payload: unknown): Promise<void> {
  const id = record.headers.ce_id ?? '';
  const schemaId = wireSchemaId(record.value) ?? -1;
  const fixture = await cloudEventMessage(registry, {
    type: record.headers.ce_type ?? '',
    key: record.key,
    payload,
    schemaId,
    id,
  });
  const routed = Object.entries(record.headers).filter(([name]) => !name.startsWith('__debezium.'));
  const made = Object.entries(fixture.headers).map(([name, value]) => [name, String(value)] as const);
  const shapes = (headers: readonly (readonly [string, string])[]) =>
    headers.map(([name, value]) => `${name}: ${headerShape(name, value, { key: record.key, id, schemaId })}`);
  expect(shapes(made), `the fixture's headers for ${record.headers.ce_type}`).toEqual(shapes(routed));
  expect(fixture.key).toBe(record.key);
  expect(Buffer.isBuffer(fixture.value) && fixture.value.equals(record.value), 'the same value bytes').toBe(true);
}

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
