import { describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { produceCloudEvents, registerTestSchema } from '../support/cloudevent-records.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import {
  COUNTED_TYPE,
  appliedRows,
  countedConsumer,
  countedSchemaV1,
  countedSchemaV2,
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

describe('schema evolution', () => {
  it('handles events written with v1 and v2 (a new optional field) in a consumer built for v1 and in one built for v2', async () => {
    const name = uniqueName('evolve');
    const topic = `${name}.seat`;
    const kafka = testKafka(stack, name);
    const registry = testRegistry(stack);
    await createTopics(kafka, [topic], 1);
    const db = await consumerDatabase('evolve');
    await createAppliedEventsTable(db.pool);
    const subject = `${name}.Counted`;
    const v1 = await registerTestSchema(registry, subject, countedSchemaV1(name));
    const v2 = await registerTestSchema(registry, subject, countedSchemaV2(name));
    expect(v2).not.toBe(v1);
    const { producer, close: closeProducer } = await connectedProducer(kafka);
    const [writtenV1, writtenV2] = await produceCloudEvents(producer, registry, topic, [
      { type: COUNTED_TYPE, key: 'k', schemaId: v1, payload: { key: 'k', seq: 1, behaviour: 'apply' } },
      {
        type: COUNTED_TYPE,
        key: 'k',
        schemaId: v2,
        payload: { key: 'k', seq: 2, behaviour: 'apply', note: 'written by v2' },
      },
    ]);

    const builtFor = { v1: countedSchemaV1(name), v2: countedSchemaV2(name) };
    const consumers = await Promise.all(
      (['v1', 'v2'] as const).map((version) =>
        startTrackedConsumer({
          definition: countedConsumer(`${name}_${version}`, [topic], { readerSchema: builtFor[version] }),
          kafka,
          groupId: `${name}_${version}`,
          registry,
          pool: db.pool,
          logger: testLogger(name),
          policy: FAST_POLICY,
        }),
      ),
    );
    const rowsOf = (version: string) => appliedRows(db.pool, `${name}_${version}`);
    await waitFor(async () => (await rowsOf('v1')).length === 2 && (await rowsOf('v2')).length === 2, {
      timeoutMs: 30_000,
      description: 'both events applied by both consumers',
    });
    await Promise.all(consumers.map((c) => c.close()));

    expect(await rowsOf('v1')).toEqual([
      { event_id: writtenV1, key: 'k', seq: 1, note: null },
      { event_id: writtenV2, key: 'k', seq: 2, note: null },
    ]);
    expect(await rowsOf('v2')).toEqual([
      { event_id: writtenV1, key: 'k', seq: 1, note: 'none' },
      { event_id: writtenV2, key: 'k', seq: 2, note: 'written by v2' },
    ]);
    await Promise.all([db.close(), closeProducer()]);
  });
});
