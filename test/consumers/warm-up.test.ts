/**
 * A consumer is warm before its first fetch: the latest writer schema of each event type it was
 * built for is in its registry client's cache, and its concurrent partitions' database connections
 * are open. A registry that is down at the start does not stop it: the warm-up says what it could
 * not do, and the consumer starts.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.js';
import { createSchemaRegistry } from '../../lib/schema-registry.js';
import { registerTestSchema } from '../support/cloudevent-records.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { countedConsumer, countedSchemaV1 } from './helpers/counted-events.js';
import {
  FAST_POLICY,
  consumerDatabase,
  createTopics,
  startTrackedConsumer,
  testKafka,
  testLogger,
  testRegistry,
} from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();

/** A logger whose lines the test reads back. */
function recordingLogger(name: string) {
  const lines: { level: number; msg: string; problems?: string[] }[] = [];
  const logger = createLogger({
    name,
    level: 'warn',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) },
  });
  return { logger, lines };
}

describe('a consumer warms up before its first fetch', () => {
  it('has its event types’ writer schemas cached and its database connections open once started, before any record', async () => {
    const name = uniqueName('warmup');
    const topic = `${name}.seat`;
    const kafka = testKafka(stack, name);
    const registry = testRegistry(stack);
    await createTopics(kafka, [topic], 3);
    const db = await consumerDatabase('warm_up');
    const readerSchema = countedSchemaV1(name);
    const schemaId = await registerTestSchema(registry, `${name}.Counted`, readerSchema);
    const running = await startTrackedConsumer({
      definition: countedConsumer(name, [topic], { readerSchema }),
      kafka,
      groupId: name,
      registry,
      pool: db.pool,
      logger: testLogger(name),
      policy: FAST_POLICY,
      partitionsConsumedConcurrently: 3,
    });
    try {
      expect(registry.client.cache.getLatestRegistryId(`${name}.Counted`)).toBe(schemaId);
      expect(registry.client.cache.getSchema(schemaId)).toBeDefined();
      expect(db.pool.totalCount).toBeGreaterThanOrEqual(3);
    } finally {
      await running.close();
      await db.close();
    }
  });

  it('starts with a registry that does not answer, saying what it could not warm', async () => {
    const name = uniqueName('warmupdown');
    const topic = `${name}.seat`;
    const kafka = testKafka(stack, name);
    await createTopics(kafka, [topic], 1);
    const db = await consumerDatabase('warm_up_down');
    const { logger, lines } = recordingLogger(name);
    const running = await startTrackedConsumer({
      definition: countedConsumer(name, [topic], { readerSchema: countedSchemaV1(name) }),
      kafka,
      groupId: name,
      registry: createSchemaRegistry('http://127.0.0.1:9/apis/ccompat/v7', { requestTimeoutMs: 2_000 }),
      pool: db.pool,
      logger,
      policy: FAST_POLICY,
      partitionsConsumedConcurrently: 2,
    });
    try {
      const warning = lines.find((l) => l.msg.startsWith('warm-up incomplete'));
      expect(warning?.problems?.length).toBe(1);
      expect(db.pool.totalCount).toBeGreaterThanOrEqual(2);
    } finally {
      await running.close();
      await db.close();
    }
  });

  it('refuses to start on a topic that does not exist, naming it and the fix (not Kafka’s “does not host this topic-partition”)', async () => {
    const name = uniqueName('notopic');
    const kafka = testKafka(stack, name);
    const db = await consumerDatabase('no_topic');
    try {
      const start = startTrackedConsumer({
        definition: countedConsumer(name, [`${name}.seat`], { readerSchema: countedSchemaV1(name) }),
        kafka,
        groupId: name,
        registry: testRegistry(stack),
        pool: db.pool,
        logger: testLogger(name),
        policy: FAST_POLICY,
      });
      await expect(start).rejects.toMatchObject({ code: 'topic_missing' });
      await expect(start).rejects.toThrow(
        `topic ${name}.seat does not exist on this Kafka: the event topics (<TOPIC_PREFIX>.seat, <TOPIC_PREFIX>.order) are created when the outbox connector is applied (npm run connector -- apply`,
      );
      // Nothing was created in its place: no dead letter topic for a topic that is not there.
      const admin = kafka.admin();
      await admin.connect();
      try {
        expect((await admin.listTopics()).filter((topic) => topic.startsWith(name))).toEqual([]);
      } finally {
        await admin.disconnect();
      }
    } finally {
      await db.close();
    }
  });
});
