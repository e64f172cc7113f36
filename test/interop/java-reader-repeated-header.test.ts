/**
 * A repeated CloudEvent attribute header is ambiguous (which value counts?): the Java reader
 * refuses the record, as the TypeScript consumers do (test/unit/consumers/cloud-event-checks.test.ts),
 * instead of reading its last value.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../../lib/kafka.js';
import { createSchemaRegistry } from '../../lib/schema-registry.js';
import { catalogueEvent, catalogueSchemaIds } from '../consumers/helpers/catalogue-events.js';
import { connectedProducer, createTopics } from '../consumers/helpers/stack-fixture.js';
import { cloudEventMessage } from '../support/cloudevent-records.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { testLogger } from '../support/seat-pipeline.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { buildJavaReader, runJavaReader } from './java-reader.js';

const stack = requireStack();
installLeakGuard();

beforeAll(async () => {
  await buildJavaReader();
}, 300_000);

describe('the Java reader and a repeated attribute header', () => {
  it('stops at the record with one line naming the header, exit 1, and prints no event', async () => {
    const topic = uniqueName('java_repeated');
    const kafka = createKafka({ brokers: stack.kafkaBrokers, clientId: 'java-repeated-test', logger: testLogger });
    await createTopics(kafka, [topic], 1);
    const registry = createSchemaRegistry(stack.registryUrl);
    const ids = await catalogueSchemaIds(registry);
    const good = await cloudEventMessage(
      registry,
      catalogueEvent(ids, 'seatReleased', {
        seat_id: 's:A-1-1',
        show_id: 's',
        section: 'A',
        row: '1',
        seat_number: 1,
        hold_id: 'h1',
        released_at: Date.now(),
      }),
    );
    const { producer, close } = await connectedProducer(kafka);
    try {
      // Two ce_type values: the TypeScript runtime used to read the first, the Java reader the last.
      await producer.send({
        topic,
        acks: -1,
        messages: [
          {
            ...good,
            headers: { ...good.headers, ce_type: [String(good.headers.ce_type), 'com.stagefront.seat.sold'] },
          },
        ],
      });
    } finally {
      await close();
    }
    const run = await runJavaReader([
      `--brokers=${stack.kafkaBrokers.join(',')}`,
      `--registry=${stack.registryUrl}`,
      `--topics=${topic}`,
      `--group=${uniqueName('java-repeated')}`,
      '--expect=1',
      '--idle-timeout-ms=60000',
    ]);
    expect(run.events).toEqual([]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.messages).toEqual([
      `java-seat-reader: record ${topic}/0/0 has the header ce_type 2 times: a CloudEvent attribute must appear once, or readers disagree on its value; fix the producer`,
    ]);
  });
});
