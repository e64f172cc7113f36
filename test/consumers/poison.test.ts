import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RuntimeEvents } from '../../consumers/runtime/lifecycle.js';
import { registerConsumerMetrics } from '../../consumers/runtime/metrics.js';
import { createLogger } from '../../lib/logger.js';
import { deadLetterTopicFor } from '../../events/catalogue.js';
import type { Message } from '../../lib/kafka.js';
import { waitFor } from '../../lib/wait.js';
import { readDeadLetters } from '../../consumers/redrive/read-dead-letters.js';
import { listDeadLetters } from '../../consumers/redrive/redrive.js';
import { cloudEventMessage, registerTestSchema, routerHeaders } from '../support/cloudevent-records.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { runChildProgram } from './helpers/child-consumer.js';
import { metricValue } from './helpers/metrics.js';
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
  testRegistry,
} from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();

function headersFor(key: string, id: string): Message['headers'] {
  return routerHeaders({ id, type: COUNTED_TYPE, key, time: new Date().toISOString() });
}

describe('poison records', () => {
  it('dead-letters each kind of poison after the delivery limit while later records on both partitions keep flowing; a handler bug holds its partition, named, until fixed', async () => {
    const name = uniqueName('poison');
    const topic = `${name}.seat`;
    const kafka = testKafka(stack, name);
    const registry = testRegistry(stack);
    await createTopics(kafka, [topic], 2);
    const db = await consumerDatabase('poison');
    await createAppliedEventsTable(db.pool);
    const schemaId = await registerTestSchema(registry, `${name}.Counted`, countedSchemaV1(name));
    const { producer, close: closeProducer } = await connectedProducer(kafka);
    const good = (key: string, seq: number, behaviour = 'apply'): Promise<Message> =>
      cloudEventMessage(registry, { type: COUNTED_TYPE, key, schemaId, payload: { key, seq, behaviour } });
    const validBytes = (await good('k0', 99)).value as Buffer;
    const wireHeader = validBytes.subarray(0, 5);

    const poison: Record<string, Message> = {
      'not a cloudevent': { key: 'k0', value: validBytes, headers: { 'content-type': 'application/avro' } },
      undecodable: {
        key: 'k0',
        value: Buffer.concat([wireHeader, Buffer.from([0xff, 0xff, 0xff])]),
        headers: headersFor('k0', '00000000-0000-4000-8000-000000000001'),
      },
      'unknown schema': {
        key: 'k0',
        value: Buffer.from([0, 0x7f, 0xff, 0xff, 0x00, 2, 0x61]),
        headers: headersFor('k0', '00000000-0000-4000-8000-000000000002'),
      },
      'invalid payload': await good('k0', -1),
      'data error': await good('k0', 50, 'fail'),
    };
    const partition0: Message[] = [await good('k0', 0)];
    for (const [index, message] of Object.values(poison).entries())
      partition0.push(message, await good('k0', index + 1));
    partition0.push(await good('k0', 6, 'transient-once'), await good('k0', 7));
    // A bug in the handler: never poison, never dead-lettered; held (and named) until the fix is deployed.
    const bugOffset = String(partition0.length);
    const bugRecord = await good('k0', 8, 'bug');
    partition0.push(bugRecord, await good('k0', 9));
    const partition1 = await Promise.all([0, 1, 2, 3, 4, 5].map((seq) => good('k1', seq)));
    await producer.send({
      topic,
      messages: [
        ...partition0.map((m) => ({ ...m, partition: 0 })),
        ...partition1.map((m) => ({ ...m, partition: 1 })),
      ],
    });

    const bug = { fixed: false };
    const events = new RuntimeEvents();
    const metrics = new Registry();
    registerConsumerMetrics(metrics, name, events, 60_000);
    const logLines: Record<string, unknown>[] = [];
    const logger = createLogger({
      name,
      level: 'warn',
      destination: { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const consumer = await startTrackedConsumer({
      definition: countedConsumer(name, [topic], { bug }),
      kafka,
      groupId: name,
      registry,
      pool: db.pool,
      logger,
      policy: FAST_POLICY,
      events,
    });
    const bugLine = await waitFor(() => logLines.find((line) => line.kind === 'handler-bug'), {
      timeoutMs: 60_000,
      description: 'the handler bug logged',
    });
    expect(bugLine).toMatchObject({
      level: 'error',
      consumer: name,
      ce_id: String(bugRecord.headers?.ce_id),
      ce_type: COUNTED_TYPE,
      topic,
      partition: 0,
      offset: bugOffset,
      code: 'TypeError',
    });
    expect(String(bugLine.stack)).toContain('applyCounted');
    // While held by the bug: its gauge is 1 for that partition, its retries counted as handler_bug.
    const held = await metrics.metrics();
    expect(metricValue(held, 'consumer_handler_bug', { consumer: name, topic, partition: '0' })).toBe(1);
    expect(metricValue(held, 'consumer_retries_total', { consumer: name, topic, kind: 'handler_bug' })).toBeGreaterThan(
      0,
    );
    expect((await appliedRows(db.pool, name)).some((row) => row.seq === 8)).toBe(false);
    bug.fixed = true;
    await waitFor(async () => (await appliedRows(db.pool, name)).length === 10 + 6, {
      timeoutMs: 60_000,
      description: 'every good record applied',
    });
    const deadLetters = await waitFor(
      async () => {
        const found = await readDeadLetters(kafka, deadLetterTopicFor(topic));
        return found.length === 5 && found;
      },
      { timeoutMs: 30_000, description: 'five dead letters' },
    );
    expect(await metrics.metrics()).not.toMatch(/^consumer_handler_bug\{/m);
    await consumer.close();

    const rows = await appliedRows(db.pool, name);
    assertKeyOrder(rows);
    expect(rows.filter((r) => r.key === 'k0').map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(rows.filter((r) => r.key === 'k1').map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(deadLetters.map((d) => d.reason)).toEqual(Object.keys(poison));
    for (const dead of deadLetters) {
      const original = poison[dead.reason]!;
      expect(dead.key?.toString()).toBe('k0');
      expect(dead.value).toEqual(original.value);
      expect(dead.attempts).toBe(FAST_POLICY.deliveryLimit);
      expect(dead.sourceTopic).toBe(topic);
      expect(dead.sourcePartition).toBe(0);
      expect(dead.headers.dlq_consumer?.toString()).toBe(name);
      expect(Date.parse(String(dead.headers.dlq_first_failure_at))).toBeLessThanOrEqual(
        Date.parse(String(dead.headers.dlq_dead_lettered_at)),
      );
      for (const [header, value] of Object.entries(original.headers ?? {}))
        expect(dead.headers[header]?.toString()).toBe(String(value));
    }
    expect(Number(deadLetters[1]!.sourceOffset)).toBe(3);

    const listing = await listDeadLetters(kafka, deadLetterTopicFor(topic));
    expect(listing.byReason.map((group) => [group.reason, group.count])).toEqual(
      Object.keys(poison)
        .sort()
        .map((reason) => [reason, 1]),
    );
    const cli = await runChildProgram(
      'consumers/redrive/cli.ts',
      { KAFKA_BROKERS: stack.kafkaBrokers.join(','), LOG_LEVEL: 'warn' },
      ['list', deadLetterTopicFor(topic)],
    );
    expect(cli.code).toBe(0);
    for (const reason of Object.keys(poison)) expect(cli.output).toContain(`  ${reason}: 1 (from ${topic};`);
    await Promise.all([db.close(), closeProducer()]);
  });
});
