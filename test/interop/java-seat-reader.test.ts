/**
 * A consumer in another language: interop/java-seat-reader (Java 17, the Kafka client, Avro, the
 * registry's Confluent-compatible API) reads the events a small rehearsal publishes, and sees the
 * same ids, types and payload values as the TypeScript consumers' decoding of the same records.
 */
import { createServer } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeCloudEvent } from '../../consumers/runtime/cloud-event.js';
import type { ConsumedEvent } from '../../consumers/runtime/types.js';
import { catalogueEventTypes } from '../../consumers/payloads.js';
import { EVENTS, EVENT_CONTENT_TYPE, type EventName } from '../../events/catalogue.js';
import { createKafka } from '../../lib/kafka.js';
import { createSchemaRegistry } from '../../lib/schema-registry.js';
import { waitFor } from '../../lib/wait.js';
import { seatId } from '../../seat-service/inventory.js';
import { catalogueEvent, catalogueSchemaIds } from '../consumers/helpers/catalogue-events.js';
import { connectedProducer, createTopics } from '../consumers/helpers/stack-fixture.js';
import { cloudEventMessage } from '../support/cloudevent-records.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, testLogger, useSeatPipeline, type CollectedRecord } from '../support/seat-pipeline.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';
import { buildJavaReader, runJavaReader, type JavaEventLine } from './java-reader.js';

const stack = requireStack();
installLeakGuard();

beforeAll(async () => {
  await buildJavaReader();
}, 300_000);

const everyEventType = catalogueEventTypes(Object.keys(EVENTS) as EventName[], 'keep-retrying');

/** The TypeScript consumers' reading of a record: the runtime's CloudEvent parse and registry decode. */
async function decodeAsTheConsumersDo(record: CollectedRecord): Promise<ConsumedEvent> {
  const registry = createSchemaRegistry(stack.registryUrl);
  const source = {
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    key: Buffer.from(record.key),
    value: record.value,
    headers: record.message.headers ?? {},
    timestamp: record.message.timestamp,
  };
  const event = await decodeCloudEvent(registry, source, everyEventType);
  if (event === undefined)
    throw new Error(
      `record ${record.topic}/${record.partition}/${record.offset} has a type no consumer knows: ${record.headers.ce_type}`,
    );
  return event;
}

describe('the Java reader sees what the TypeScript consumers see', () => {
  const show = 'javashow';
  const pipeline = useSeatPipeline(show, { section: 'A', rows: 3, seatsPerRow: 8, priceCents: 4500 });

  /** 8 holds of 2 seats: 4 confirmed, 2 released, 2 expired. 16 held, 8 sold, 4 orders, 4 released, 4 expired. */
  async function smallRehearsal(): Promise<void> {
    const service = pipeline().service;
    const holds: string[] = [];
    for (let i = 0; i < 8; i++) {
      const row = 1 + Math.floor(i / 4);
      const first = 1 + (i % 4) * 2;
      const held = await service.hold({
        showId: show,
        seatIds: [seatId(show, 'A', row, first), seatId(show, 'A', row, first + 1)],
        buyerId: `buyer-${i}`,
      });
      if (held.status !== 'held') throw new Error(`hold ${i}: ${held.status}`);
      holds.push(held.holdId);
    }
    for (const holdId of holds.slice(0, 4))
      expect((await service.confirm({ holdId, buyerEmail: `${holdId.slice(0, 8)}@example.test` })).status).toBe(
        'confirmed',
      );
    for (const holdId of holds.slice(4, 6)) expect((await service.release(holdId)).status).toBe('released');
    // The last two holds run out: their time is moved into the past and the sweeper's query expires them.
    await adminQuery(
      pipeline().adminUrl,
      `update holds set created_at = now() - interval '2 minutes', expires_at = now() - interval '1 second' where hold_id = any($1)`,
      [holds.slice(6)],
    );
    expect(await service.expireDueHolds()).toBe(2);
  }

  it('reads every event of a small rehearsal with the same ids, types, attributes and payload values', async () => {
    const { topics } = pipeline();
    await smallRehearsal();
    const outbox = await adminQuery(pipeline().adminUrl, 'select id, type from outbox');
    const published = new Map<string, string>(
      outbox.rows.map((row: { id: string; type: string }) => [row.id, row.type]),
    );
    expect(new Set(published.values())).toEqual(new Set(Object.values(EVENTS).map((e) => e.type)));
    expect(published.size).toBe(16 + 8 + 4 + 4 + 4);

    const collector = await collectRecords([topics.seat, topics.order]);
    let records: CollectedRecord[];
    try {
      records = await waitFor(() => (collector.records.length >= published.size ? [...collector.records] : undefined), {
        timeoutMs: 60_000,
        description: `${published.size} records on ${topics.seat} and ${topics.order}`,
      });
    } finally {
      await collector.stop();
    }
    const typescript = new Map<string, ConsumedEvent>();
    for (const record of records) {
      const event = await decodeAsTheConsumersDo(record);
      typescript.set(event.id, event);
    }
    expect(new Set(typescript.keys())).toEqual(new Set(published.keys()));

    const run = await runJavaReader([
      `--brokers=${stack.kafkaBrokers.join(',')}`,
      `--registry=${stack.registryUrl}`,
      `--topics=${topics.seat},${topics.order}`,
      `--group=${uniqueName('java-seat-reader')}`,
      `--expect=${published.size}`,
      '--idle-timeout-ms=60000',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.messages).toEqual([
      `java-seat-reader: read ${published.size} events from ${topics.seat}, ${topics.order}`,
    ]);

    // Nothing missing, nothing extra, nothing twice.
    expect(run.events.map((e) => e.id).sort()).toEqual([...published.keys()].sort());
    for (const java of run.events) expectSameEvent(java, typescript.get(java.id));
  });
});

function expectSameEvent(java: JavaEventLine, ts: ConsumedEvent | undefined): void {
  expect(ts, `the TypeScript side has ${java.id}`).toBeDefined();
  if (ts === undefined) return;
  const where = `${java.type} ${java.id}`;
  expect({ topic: java.topic, partition: java.partition, offset: String(java.offset), key: java.key }, where).toEqual({
    topic: ts.record.topic,
    partition: ts.record.partition,
    offset: ts.record.offset,
    key: ts.key,
  });
  expect({ type: java.type, source: java.source, subject: java.subject }, where).toEqual({
    type: ts.type,
    source: ts.source,
    subject: ts.subject,
  });
  // Same instant, whatever each side's rendering of it (ce_time is RFC 3339 with milliseconds).
  expect(Date.parse(java.time), `${where} time ${java.time} vs ${ts.time}`).toBe(ts.timeMs);
  expect(java.datacontenttype, where).toBe(EVENT_CONTENT_TYPE);
  const dataschemaHeader = ts.record.headers.ce_dataschema;
  expect(java.dataschema, where).toBe(dataschemaHeader === undefined ? null : String(dataschemaHeader));
  // Field by field: Avro longs (timestamp-millis) are epoch milliseconds as JSON numbers on both sides.
  const payload = ts.payload as Record<string, unknown>;
  expect(Object.keys(java.data).sort(), where).toEqual(Object.keys(payload).sort());
  for (const [field, value] of Object.entries(payload))
    expect(java.data[field], `${where} field ${field}`).toEqual(value);
}

describe('a record the reader cannot read stops it with one line naming the problem and the fix', () => {
  const topics = {
    noId: uniqueName('java_no_id'),
    noMagic: uniqueName('java_no_magic'),
    valid: uniqueName('java_valid'),
  };

  async function publishBadRecords(): Promise<void> {
    const kafka = createKafka({ brokers: stack.kafkaBrokers, clientId: 'java-interop-test', logger: testLogger });
    await createTopics(kafka, Object.values(topics), 1);
    const registry = createSchemaRegistry(stack.registryUrl);
    const ids = await catalogueSchemaIds(registry);
    const released = catalogueEvent(ids, 'seatReleased', {
      seat_id: 's:A-1-1',
      show_id: 's',
      section: 'A',
      row: '1',
      seat_number: 1,
      hold_id: 'h1',
      released_at: Date.now(),
    });
    const good = await cloudEventMessage(registry, released);
    const { ce_id: _dropped, ...withoutId } = good.headers;
    const { producer, close } = await connectedProducer(kafka);
    try {
      await producer.send({ topic: topics.noId, acks: -1, messages: [{ ...good, headers: withoutId }] });
      await producer.send({
        topic: topics.noMagic,
        acks: -1,
        messages: [{ ...good, value: Buffer.concat([Buffer.from([1]), (good.value as Buffer).subarray(1)]) }],
      });
      await producer.send({ topic: topics.valid, acks: -1, messages: [good] });
    } finally {
      await close();
    }
  }

  async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  const read = (topic: string, registryUrl = stack.registryUrl) =>
    runJavaReader([
      `--brokers=${stack.kafkaBrokers.join(',')}`,
      `--registry=${registryUrl}`,
      `--topics=${topic}`,
      `--group=${uniqueName('java-bad')}`,
      '--expect=1',
      '--idle-timeout-ms=60000',
    ]);

  it('a missing header, a wrong magic byte and a registry that does not answer', async () => {
    await publishBadRecords();

    const noId = await read(topics.noId);
    expect(noId.code).toBe(1);
    expect(noId.events).toEqual([]);
    expect(noId.messages).toEqual([
      expect.stringMatching(
        new RegExp(
          `^java-seat-reader: record ${topics.noId}/0/0 has no ce_id header, so it is not a CloudEvent in Kafka binary mode: fix the producer`,
        ),
      ),
    ]);

    const noMagic = await read(topics.noMagic);
    expect(noMagic.code).toBe(1);
    expect(noMagic.events).toEqual([]);
    expect(noMagic.messages).toEqual([
      expect.stringMatching(
        new RegExp(
          `^java-seat-reader: record ${topics.noMagic}/0/0 starts with byte 0x01, not the registry wire format's magic byte 0x00: the producer must serialize through the registry`,
        ),
      ),
    ]);

    const unreachable = `http://127.0.0.1:${await closedPort()}/apis/ccompat/v7`;
    const noRegistry = await read(topics.valid, unreachable);
    expect(noRegistry.code).toBe(4);
    expect(noRegistry.events).toEqual([]);
    expect(noRegistry.messages).toEqual([
      expect.stringMatching(
        /^java-seat-reader: the schema registry at .* does not answer .*: start it \(npm run stack -- start\) or pass --registry/,
      ),
    ]);
    expect(noRegistry.messages[0]).toContain(unreachable);

    // The same record with the registry there reads fine: the failures above are the records' and the registry's.
    const valid = await read(topics.valid);
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.events.map((e) => [e.type, e.data.hold_id])).toEqual([[EVENTS.seatReleased.type, 'h1']]);
  });
});
