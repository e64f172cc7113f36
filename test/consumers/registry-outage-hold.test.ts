/**
 * A registry that answers 4xx without having lost the record's schema for good: a consumer pointed
 * at the real Apicurio under a wrong path (its root, where the Confluent-compatible API is not)
 * holds its partitions, dead-letters nothing, and applies every event once when it is restarted
 * with the right URL. And the positive control: a schema id that truly does not exist, while the
 * registry serves the consumer's subject, is still dead-lettered as "unknown schema"; and a registry
 * without the consumer's subject holds until the schemas are back.
 */
import { describe, expect, it } from 'vitest';
import { deadLetterTopicFor } from '../../events/catalogue.js';
import type { Message } from '../../lib/kafka.js';
import { createSchemaRegistry, registryAddress } from '../../lib/schema-registry.js';
import { waitFor } from '../../lib/wait.js';
import { readDeadLetters } from '../../consumers/redrive/read-dead-letters.js';
import { cloudEventMessage, registerTestSchema, routerHeaders } from '../support/cloudevent-records.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { pageSubjectsRegisteredFromNow } from '../support/registry-pages.js';
import { requireStack, uniqueName } from '../support/stack.js';
import {
  COUNTED_TYPE,
  appliedRows,
  assertKeyOrder,
  countedConsumer,
  countedSchemaV1,
  createAppliedEventsTable,
} from './helpers/counted-events.js';
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

/** The registry's origin: Apicurio answers 404 there for /schemas/ids/<id> and every other ccompat path. */
function wrongPath(url: string): string {
  return new URL(url).origin;
}

describe('a schema registry that answers 4xx', () => {
  it('pointed at the wrong path: the consumer holds its partitions, dead-letters nothing, and applies every event once after a restart with the right URL', async () => {
    const name = uniqueName('registryhold');
    const topic = `${name}.seat`;
    const kafka = testKafka(stack, name);
    const registry = testRegistry(stack);
    await createTopics(kafka, [topic], 2);
    const db = await consumerDatabase('registry_hold');
    await createAppliedEventsTable(db.pool);
    const readerSchema = countedSchemaV1(name);
    const schemaId = await registerTestSchema(registry, `${name}.Counted`, readerSchema);
    const { producer, close: closeProducer } = await connectedProducer(kafka);
    const messages = await Promise.all(
      ['k0', 'k1'].flatMap((key) =>
        [0, 1, 2, 3].map((seq) =>
          cloudEventMessage(registry, { type: COUNTED_TYPE, key, schemaId, payload: { key, seq, behaviour: 'apply' } }),
        ),
      ),
    );
    await producer.send({ topic, acks: -1, messages: messages.map((m, i) => ({ ...m, partition: i < 4 ? 0 : 1 })) });
    const definition = () => countedConsumer(name, [topic], { readerSchema });

    const wrong = createSchemaRegistry(wrongPath(stack.registryUrl));
    const held = await startTrackedConsumer({
      definition: definition(),
      kafka,
      groupId: name,
      registry: wrong,
      pool: db.pool,
      logger: testLogger(name),
      policy: FAST_POLICY,
    });
    const failing = new Map<number, { code: string; error: string }>();
    const retries = new Map<number, number>();
    held.events.on('failing', ({ partition, code, error }) => failing.set(partition, { code, error }));
    held.events.on('retry', ({ partition }) => retries.set(partition, (retries.get(partition) ?? 0) + 1));
    const deadLettered: string[] = [];
    held.events.on('deadLettered', ({ reason }) => deadLettered.push(reason));
    // Well past the delivery limit on both partitions: a poison verdict would have dead-lettered by now.
    await waitFor(
      () => [0, 1].every((p) => (retries.get(p) ?? 0) > FAST_POLICY.deliveryLimit * 2) || deadLettered.length > 0,
      {
        timeoutMs: 60_000,
        description: 'both partitions retried past the delivery limit',
      },
    );
    await held.close();

    expect(deadLettered).toEqual([]);
    expect(await readDeadLetters(kafka, deadLetterTopicFor(topic))).toEqual([]);
    expect(await appliedRows(db.pool, name)).toEqual([]);
    for (const partition of [0, 1]) {
      const failure = failing.get(partition);
      expect(failure?.code, `partition ${partition}`).toBe('schema_registry_unavailable');
      expect(failure?.error).toContain(
        `schema id ${schemaId} is not found at the schema registry ${registryAddress(wrong.url)} (HTTP 404), and the registry does not show that it holds this consumer's schemas: GET /subjects fails (HTTP 404`,
      );
      expect(failure?.error).toContain("point SCHEMA_REGISTRY_URL at the producers' registry");
    }

    // The same group, restarted with the right URL: every event applied, once, in key order.
    const right = await startTrackedConsumer({
      definition: definition(),
      kafka,
      groupId: name,
      registry: testRegistry(stack),
      pool: db.pool,
      logger: testLogger(name),
      policy: FAST_POLICY,
    });
    const rows = await waitFor(
      async () => {
        const applied = await appliedRows(db.pool, name);
        return applied.length >= messages.length && applied;
      },
      { timeoutMs: 60_000, description: 'every event applied after the restart' },
    );
    await right.close();
    assertKeyOrder(rows);
    expect(rows.map((r) => r.event_id).sort()).toEqual(messages.map((m) => String(m.headers.ce_id)).sort());
    expect(await readDeadLetters(kafka, deadLetterTopicFor(topic))).toEqual([]);
    await Promise.all([db.close(), closeProducer()]);
  });

  it("a schema id that does not exist, while the registry serves the consumer's subject, is still dead-lettered as unknown schema", async () => {
    const name = uniqueName('registryunknown');
    const topic = `${name}.seat`;
    const kafka = testKafka(stack, name);
    const registry = testRegistry(stack);
    await createTopics(kafka, [topic], 1);
    const db = await consumerDatabase('registry_unknown');
    await createAppliedEventsTable(db.pool);
    const readerSchema = countedSchemaV1(name);
    const schemaId = await registerTestSchema(registry, `${name}.Counted`, readerSchema);
    const good = (seq: number) =>
      cloudEventMessage(registry, {
        type: COUNTED_TYPE,
        key: 'k0',
        schemaId,
        payload: { key: 'k0', seq, behaviour: 'apply' },
      });
    const unknownId = '00000000-0000-4000-8000-0000000000a1';
    // The first record of a fresh consumer: only its reader schema shows the registry is the right one.
    const unknown: Message = {
      key: 'k0',
      value: Buffer.from([0, 0x7f, 0xff, 0xff, 0x00, 2, 0x61]),
      headers: routerHeaders({ id: unknownId, type: COUNTED_TYPE, key: 'k0', time: new Date().toISOString() }),
    };
    const { producer, close: closeProducer } = await connectedProducer(kafka);
    await producer.send({ topic, acks: -1, messages: [unknown, await good(0), await good(1)] });

    const consumer = await startTrackedConsumer({
      definition: countedConsumer(name, [topic], { readerSchema }),
      kafka,
      groupId: name,
      registry,
      pool: db.pool,
      logger: testLogger(name),
      policy: FAST_POLICY,
    });
    const deadLetters = await waitFor(
      async () => {
        const found = await readDeadLetters(kafka, deadLetterTopicFor(topic));
        return found.length > 0 && found;
      },
      { timeoutMs: 60_000, description: 'the unknown schema dead-lettered' },
    );
    await waitFor(async () => (await appliedRows(db.pool, name)).length === 2, {
      timeoutMs: 60_000,
      description: 'the good records applied',
    });
    await consumer.close();
    expect(deadLetters.map((d) => [d.reason, d.ceId, d.attempts])).toEqual([
      ['unknown schema', unknownId, FAST_POLICY.deliveryLimit],
    ]);
    expect((await appliedRows(db.pool, name)).map((r) => r.seq)).toEqual([0, 1]);
    await Promise.all([db.close(), closeProducer()]);
  });

  it("a registry without the consumer's subject (wiped, or another environment's) holds; once the schemas are back (here under a subject prefix) the unknown id is poison", async () => {
    const name = uniqueName('registrywiped');
    const topic = `${name}.seat`;
    const kafka = testKafka(stack, name);
    const registry = testRegistry(stack);
    await createTopics(kafka, [topic], 1);
    const db = await consumerDatabase('registry_wiped');
    await createAppliedEventsTable(db.pool);
    const readerSchema = countedSchemaV1(name);
    const unknownId = '00000000-0000-4000-8000-0000000000b2';
    const { producer, close: closeProducer } = await connectedProducer(kafka);
    await producer.send({
      topic,
      acks: -1,
      messages: [
        {
          key: 'k0',
          value: Buffer.from([0, 0x7f, 0xff, 0xff, 0x01, 2, 0x61]),
          headers: routerHeaders({ id: unknownId, type: COUNTED_TYPE, key: 'k0', time: new Date().toISOString() }),
        },
      ],
    });

    const consumer = await startTrackedConsumer({
      definition: countedConsumer(name, [topic], { readerSchema }),
      kafka,
      groupId: name,
      registry,
      pool: db.pool,
      logger: testLogger(name),
      policy: FAST_POLICY,
    });
    let retries = 0;
    const failures: string[] = [];
    consumer.events.on('retry', () => (retries += 1));
    consumer.events.on('failing', ({ code, error }) => failures.push(`${code}: ${error}`));
    await waitFor(() => retries > FAST_POLICY.deliveryLimit * 2, {
      timeoutMs: 60_000,
      description: 'retried past the delivery limit',
    });
    expect(await readDeadLetters(kafka, deadLetterTopicFor(topic))).toEqual([]);
    expect(failures.at(-1)).toContain(
      `schema_registry_unavailable: schema id 2147483393 is not found at the schema registry ${registryAddress(registry.url)} (HTTP 404), and the registry does not show that it holds this consumer's schemas: no subject is named ${name}.Counted`,
    );

    // The schemas are back, under the subject a SCHEMA_SUBJECT_PREFIX gives them: now the id is the record's fault.
    // A registry shared by many teams lists its subjects a page at a time (Apicurio: 1,000): the new subject is on a later page.
    await registerTestSchema(
      registry,
      `${name}.Earlier`,
      JSON.stringify({ type: 'record', name: 'Earlier', fields: [] }),
    );
    const restorePages = await pageSubjectsRegisteredFromNow(stack);
    try {
      await registerTestSchema(registry, `staging.${name}.Counted`, readerSchema);
      const deadLetters = await waitFor(
        async () => {
          const found = await readDeadLetters(kafka, deadLetterTopicFor(topic));
          return found.length > 0 && found;
        },
        { timeoutMs: 60_000, description: 'the unknown schema dead-lettered' },
      );
      expect(deadLetters.map((d) => [d.reason, d.ceId])).toEqual([['unknown schema', unknownId]]);
    } finally {
      await restorePages();
      await consumer.close();
    }
    await Promise.all([db.close(), closeProducer()]);
  });
});
