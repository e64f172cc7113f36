/**
 * A record whose handler ends the process (process.exit mid-batch) is dead-lettered after the
 * delivery limit across restarts, counted in the consumer database: the crash loop ends, and
 * every other record, before and after it on the same partition, is applied exactly once.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack } from '../support/stack.js';
import { type ChildConsumer, startChildProgram } from './helpers/child-consumer.js';
import { COUNTED_TYPE, appliedRows } from './helpers/counted-events.js';
import { startDrill } from './helpers/drill.js';
import { produceCloudEvents } from '../support/cloudevent-records.js';

const stack = requireStack();
installLeakGuard();

const DELIVERY_LIMIT = 3;

describe('a record that crashes the process', () => {
  it('is dead-lettered as "crashed the consumer" after the delivery limit, counted across restarts', async () => {
    const drill = await startDrill({ stack, prefix: 'crash_loop', policy: { deadlineMs: 300_000, lateRetryWindowMs: 5_000, deliveryLimit: DELIVERY_LIMIT, retryBaseMs: 100, retryCapMs: 1_000 }, partitions: 1 });
    const before = drill.nextEvents(20);
    const crasher = { type: COUNTED_TYPE, key: 'k-crash', schemaId: drill.schemaId, payload: { key: 'k-crash', seq: 1, behaviour: 'crash' } };
    const after = drill.nextEvents(20);
    const ids = await produceCloudEvents(drill.producer, drill.registry, drill.topic, [...before, crasher, ...after]);
    const crasherId = ids[before.length]!;
    const good = ids.filter((id) => id !== crasherId);

    const env = {
      COUNTED_NAME: drill.name,
      COUNTED_TOPIC: drill.topic,
      COUNTED_DATABASE_URL: drill.db.roleUrl,
      KAFKA_BROKERS: stack.kafkaBrokers.join(','),
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      DELIVERY_LIMIT: String(DELIVERY_LIMIT),
    };
    const program = 'test/consumers/helpers/counted-consumer-program.ts';
    let child: ChildConsumer = startChildProgram(program, env);
    let exits = 0;
    await waitFor(async () => {
      if (child.process.exitCode !== null) {
        exits += 1;
        expect(child.process.exitCode).toBe(3); // the handler's exit, not a start failure
        await child.close();
        child = startChildProgram(program, env);
      }
      return (await drill.deadLetters()).length === 1;
    }, { timeoutMs: 240_000, intervalMs: 250, description: 'the crashing record dead-lettered' });
    await drill.expectAllAppliedOnce(good, 1).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\nchild output:\n${child.output()}`);
    });
    await child.close();

    // One crash inside a group (the culprit unknown yet), then the limit's attempts alone.
    expect(exits).toBe(DELIVERY_LIMIT + 1);
    const [dead] = await drill.deadLetters();
    expect(dead?.ceId).toBe(crasherId);
    expect(dead?.reason).toBe('crashed the consumer');
    expect(dead?.attempts).toBe(DELIVERY_LIMIT);
    expect((await appliedRows(drill.pool, drill.name)).some((row) => row.event_id === crasherId)).toBe(false);
    await drill.close();
  });
});
