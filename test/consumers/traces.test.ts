/**
 * Traces through the outbox: one hold and its confirmation on a real pipeline (seat service →
 * outbox → Debezium → Kafka → the three real consumers, all in this process so one in-memory
 * exporter sees every span). Each consumer's span for each of those events is linked to the seat
 * service's span of the operation that wrote it (the same trace and span id as the row's
 * ce_traceparent), with the messaging and CloudEvents attributes; an event without a trace header,
 * and one with an invalid one, are handled all the same.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confirmationEmailConsumer } from '../../consumers/confirmation-email/consumer.js';
import { createEmailSender } from '../../consumers/confirmation-email/send-confirmation.js';
import { migrateConsumerDatabase } from '../../consumers/runtime/migrations.js';
import { salesLedgerConsumer } from '../../consumers/sales-ledger/consumer.js';
import { seatAvailabilityConsumer } from '../../consumers/seat-availability/consumer.js';
import type { ConsumerDefinition } from '../../consumers/runtime/types.js';
import { EVENTS } from '../../events/catalogue.js';
import { createPool } from '../../lib/postgres.js';
import { type Tracing, parseTraceparent, startOperationSpan, startTracing } from '../../lib/tracing.js';
import { waitFor } from '../../lib/wait.js';
import { seatId } from '../../seat-service/inventory.js';
import { cloudEventMessage } from '../support/cloudevent-records.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { useSeatPipeline } from '../support/seat-pipeline.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { catalogueEvent, catalogueSchemaIds } from './helpers/catalogue-events.js';
import { startSmtpSink } from './helpers/smtp-sink.js';
import {
  FAST_POLICY,
  connectedProducer,
  consumerDatabase,
  startTrackedConsumer,
  testKafka,
  testLogger,
  testRegistry,
} from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();

describe('traces through the outbox', () => {
  const show = 'trace1';
  const pipeline = useSeatPipeline(show, { section: 'A', rows: 2, seatsPerRow: 4, priceCents: 4500 });
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing | undefined;

  beforeAll(() => {
    tracing = startTracing({
      serviceName: 'traces-test',
      otlpEndpoint: '',
      logger: testLogger('tracing'),
      exporters: [exporter],
    });
  });
  afterAll(async () => tracing?.shutdown());

  it(
    "links every consumer's span for a hold's and a confirmation's events to the seat service's span that wrote them",
    { timeout: 90_000 },
    async () => {
      const { service, topics, adminUrl } = pipeline();
      const database = await consumerDatabase('traces');
      const smtp = await startSmtpSink();
      const transport = createEmailSender({
        smtpHost: '127.0.0.1',
        smtpPort: smtp.port,
        smtpSecure: false,
        smtpUser: '',
        smtpPassword: '',
        smtpTimeoutMs: 5_000,
        mailFrom: 'tickets@stagefront.example',
        sendConcurrency: 2,
      });
      const closeTransport = track('smtp transport', () => transport.close());
      const prefix = topics.seat.replace(/\.seat$/, '');
      const names = {
        seats: uniqueName('trace-seats'),
        ledger: uniqueName('trace-ledger'),
        email: uniqueName('trace-email'),
      };
      const definitions: ConsumerDefinition[] = [
        seatAvailabilityConsumer(names.seats, prefix),
        salesLedgerConsumer(names.ledger, prefix),
        confirmationEmailConsumer(names.email, prefix, transport, 60_000),
      ];
      const kafka = testKafka(stack, 'traces-test');
      const registry = testRegistry(stack);
      const consumers = [];
      for (const definition of definitions) {
        await migrateConsumerDatabase(database.pool, definition, testLogger('migrate'));
        consumers.push(
          await startTrackedConsumer({
            definition,
            kafka,
            groupId: definition.name,
            registry,
            pool: database.pool,
            logger: testLogger(definition.name),
            policy: FAST_POLICY,
          }),
        );
      }

      // One hold, then its confirmation: each a seat service span whose traceparent its rows carry.
      const seats = [seatId(show, 'A', 1, 1), seatId(show, 'A', 1, 2)];
      const hold = await service.hold({ showId: show, seatIds: seats, buyerId: 'tracer' });
      if (hold.status !== 'held') throw new Error(`expected a hold, got ${hold.status}`);
      const confirm = await service.confirm({ holdId: hold.holdId, buyerEmail: 'tracer@example.test' });
      if (confirm.status !== 'confirmed') throw new Error(`expected a confirmation, got ${confirm.status}`);

      const outbox = createPool({
        connectionString: adminUrl,
        applicationName: 'traces-test',
        logger: testLogger('pool'),
        max: 1,
      });
      const rows = await outbox.query<{ id: string; type: string; ce_traceparent: string | null }>(
        'select id::text, type, ce_traceparent from outbox',
      );
      await outbox.end();
      const traceparentOf = new Map(rows.rows.map((row) => [row.id, row.ce_traceparent]));
      const serviceSpans = exporter.getFinishedSpans().filter((span) => span.name.startsWith('seat-service '));
      const operationSpan = (name: string) => {
        const found = serviceSpans.filter((span) => span.name === name);
        expect(found, `one ${name} span`).toHaveLength(1);
        return found[0] as ReadableSpan;
      };
      const writers = new Map<string, ReadableSpan>([
        ...hold.eventIds.map((id) => [id, operationSpan('seat-service hold')] as const),
        ...confirm.eventIds.map((id) => [id, operationSpan('seat-service confirm')] as const),
      ]);
      for (const [id, span] of writers) {
        const written = parseTraceparent(traceparentOf.get(id) ?? undefined);
        expect(written, `event ${id}'s ce_traceparent`).toMatchObject({
          traceId: span.spanContext().traceId,
          spanId: span.spanContext().spanId,
        });
      }

      // Which consumer handles which of those events.
      const typeOf = new Map(rows.rows.map((row) => [row.id, row.type]));
      const handles = (definition: ConsumerDefinition, id: string) =>
        definition.eventTypes[typeOf.get(id) ?? ''] !== undefined;
      const expected = definitions.flatMap((definition) =>
        [...writers.keys()].filter((id) => handles(definition, id)).map((id) => ({ consumer: definition.name, id })),
      );
      expect(expected.map((e) => e.consumer).sort()).toEqual(
        [names.seats, names.seats, names.seats, names.seats, names.ledger, names.email].sort(),
      );

      // An event without a trace header, and one with an invalid one: handled, their spans without links.
      const schemaIds = await catalogueSchemaIds(registry);
      const untraced = await Promise.all(
        [seatId(show, 'A', 2, 1), seatId(show, 'A', 2, 2)].map((seat, index) =>
          cloudEventMessage(
            registry,
            catalogueEvent(schemaIds, 'seatHeld', {
              seat_id: seat,
              show_id: show,
              section: 'A',
              row: '2',
              seat_number: index + 1,
              hold_id: randomUUID(),
              buyer_id: 'untraced',
              held_at: Date.now(),
              expires_at: Date.now() + 60_000,
            }),
          ),
        ),
      );
      const [withoutHeader, invalid] = untraced;
      if (withoutHeader === undefined || invalid === undefined) throw new Error('two untraced events');
      // The fixture writes a ce_traceparent as the router does: this event has none at all.
      delete withoutHeader.headers.ce_traceparent;
      invalid.headers.ce_traceparent = 'not-a-traceparent';
      const { producer, close: closeProducer } = await connectedProducer(kafka);
      await producer.send({ topic: topics.seat, acks: -1, messages: untraced });
      await closeProducer();
      const untracedIds = untraced.map((message) => String(message.headers.ce_id));

      const consumerSpan = (consumer: string, id: string) =>
        exporter
          .getFinishedSpans()
          .find(
            (span) =>
              span.kind === SpanKind.CONSUMER &&
              span.attributes['stagefront.consumer'] === consumer &&
              span.attributes['cloudevents.event_id'] === id &&
              span.attributes['stagefront.inbox.outcome'] === 'applied',
          );
      await waitFor(
        () =>
          [...expected, ...untracedIds.map((id) => ({ consumer: names.seats, id }))].every(
            ({ consumer, id }) => consumerSpan(consumer, id) !== undefined,
          ),
        {
          timeoutMs: 60_000,
          description: "every consumer's span for each event",
        },
      );

      for (const { consumer, id } of expected) {
        const span = consumerSpan(consumer, id) as ReadableSpan;
        const producerSpan = writers.get(id) as ReadableSpan;
        expect(
          span.links.map((link) => ({ traceId: link.context.traceId, spanId: link.context.spanId })),
          `${consumer}'s span for ${id}`,
        ).toEqual([{ traceId: producerSpan.spanContext().traceId, spanId: producerSpan.spanContext().spanId }]);
        const topic = typeOf.get(id) === EVENTS.orderConfirmed.type ? topics.order : topics.seat;
        expect(span.name).toBe(`process ${topic}`);
        expect(span.attributes).toMatchObject({
          'messaging.system': 'kafka',
          'messaging.operation.type': 'process',
          'messaging.destination.name': topic,
          'messaging.consumer.group.name': consumer,
          'messaging.message.id': id,
          'cloudevents.event_id': id,
          'cloudevents.event_type': typeOf.get(id),
          'cloudevents.event_source': expect.any(String) as unknown,
          'cloudevents.event_subject': expect.any(String) as unknown,
          'cloudevents.event_spec_version': '1.0',
        });
        // A span of its own trace, not a child of the producer's: linked, not parented.
        expect(span.spanContext().traceId).not.toBe(producerSpan.spanContext().traceId);
      }
      for (const id of untracedIds) expect(consumerSpan(names.seats, id)?.links).toEqual([]);

      const inbox = await database.pool.query<{ consumer: string; event_id: string }>(
        'select consumer, event_id from inbox',
      );
      const handled = new Set(inbox.rows.map((row) => `${row.consumer} ${row.event_id}`));
      for (const { consumer, id } of [...expected, ...untracedIds.map((id) => ({ consumer: names.seats, id }))])
        expect(handled.has(`${consumer} ${id}`), `${consumer} handled ${id}`).toBe(true);
      expect(smtp.received).toHaveLength(1);

      for (const consumer of consumers) await consumer.close();
      await closeTransport();
      await smtp.close();
      await database.close();
    },
  );

  it('exports spans over OTLP HTTP/protobuf to the configured endpoint, /v1/traces', async () => {
    const received: { path: string | undefined; contentType: string | undefined; bytes: Buffer }[] = [];
    const collector = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({
          path: request.url,
          contentType: request.headers['content-type'],
          bytes: Buffer.concat(chunks),
        });
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
    const closeCollector = track(
      'OTLP collector',
      () => new Promise<void>((resolve) => collector.close(() => resolve())),
    );
    const { port } = collector.address() as AddressInfo;
    const exporting = startTracing({
      serviceName: 'traces-test-otlp',
      otlpEndpoint: `http://127.0.0.1:${port}/`,
      logger: testLogger('tracing'),
    });
    const span = startOperationSpan('seat-service hold', { 'stagefront.show_id': 'otlp-show' });
    span.end();
    await exporting.shutdown(); // flushes the batch
    await closeCollector();
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ path: '/v1/traces', contentType: 'application/x-protobuf' });
    const body = received[0]?.bytes.toString('latin1') ?? '';
    for (const text of ['traces-test-otlp', 'seat-service hold', 'otlp-show']) expect(body).toContain(text);
    // The trace id travels as 16 raw bytes.
    expect(received[0]?.bytes.includes(Buffer.from(parseTraceparent(span.traceparent)?.traceId ?? '', 'hex'))).toBe(
      true,
    );
  });

  it('reads only W3C traceparents: version 00 exactly, later versions by their first four fields, nothing else', () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const spanId = '00f067aa0ba902b7';
    expect(parseTraceparent(`00-${traceId}-${spanId}-01`)).toEqual({ traceId, spanId, traceFlags: 1, isRemote: true });
    expect(parseTraceparent(`00-${traceId}-${spanId}-00`)?.traceFlags).toBe(0);
    expect(parseTraceparent(`01-${traceId}-${spanId}-03-later-fields`)).toEqual({
      traceId,
      spanId,
      traceFlags: 1,
      isRemote: true,
    });
    for (const invalid of [
      undefined,
      '',
      'not-a-traceparent',
      `00-${traceId}-${spanId}-01-extra`,
      `ff-${traceId}-${spanId}-01`,
      `00-${'0'.repeat(32)}-${spanId}-01`,
      `00-${traceId}-${'0'.repeat(16)}-01`,
      `00-${traceId.toUpperCase()}-${spanId}-01`,
      `00-${traceId.slice(1)}-${spanId}-01`,
    ])
      expect(parseTraceparent(invalid), String(invalid)).toBeUndefined();
  });
});
