/**
 * A record that ends the process, whether its handler exits mid-batch or decoding it exhausts the
 * heap, is dead-lettered after the delivery limit across restarts, counted in the consumer
 * database: the crash loop ends, and every other record, before and after it on the same
 * partition, is applied exactly once.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack } from '../support/stack.js';
import { type ChildConsumer, startChildProgram } from './helpers/child-consumer.js';
import { COUNTED_TYPE, appliedRows } from './helpers/counted-events.js';
import { type Drill, startDrill } from './helpers/drill.js';
import { arrayBombSchema, arrayBombValue } from './helpers/hostile-records.js';
import {
  produceCloudEvents,
  produceRawMessages,
  registerTestSchema,
  routerHeaders,
} from '../support/cloudevent-records.js';
import type { StackEndpoints } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();

/** The least that still separates a crash counted across restarts from one (each restart costs a join). */
const DELIVERY_LIMIT = 2;
const PROGRAM = 'test/consumers/helpers/counted-consumer-program.ts';
/** The child's heap in the heap-exhaustion case. */
const BOMB_HEAP_MB = 96;
/**
 * The array bomb's null items: far more than BOMB_HEAP_MB holds, few enough that the decode limits'
 * walk over the declared items (nulls take no bytes, so it visits every one) ends in about a
 * second. At 2^31 that walk alone took about 30 s before each crash.
 */
const BOMB_ITEMS = 2 ** 26;
/** Each end costs a start and a join that waits out the dead member's session (about 15 s here). */
const TEST_TIMEOUT_MS = 200_000;

/** The child consumer's environment; `extra` adds to it (a heap limit, a decode limit). */
function childEnv(drill: Drill, endpoints: StackEndpoints, extra: Record<string, string> = {}): Record<string, string> {
  return {
    COUNTED_NAME: drill.name,
    COUNTED_TOPIC: drill.topic,
    COUNTED_DATABASE_URL: drill.db.roleUrl,
    KAFKA_BROKERS: endpoints.kafkaBrokers.join(','),
    SCHEMA_REGISTRY_URL: endpoints.registryUrl,
    DELIVERY_LIMIT: String(DELIVERY_LIMIT),
    ...extra,
  };
}

/**
 * Runs the child consumer, starting it again whenever it ends, until the drill has one dead
 * letter, then until every one of `good` is applied once; checks each end with `expectEnd`.
 * Returns how many times it ended.
 */
async function runUntilDeadLettered(
  drill: Drill,
  env: Record<string, string>,
  good: readonly string[],
  expectEnd: (child: ChildConsumer) => void,
): Promise<number> {
  let child: ChildConsumer = startChildProgram(PROGRAM, env);
  let ends = 0;
  try {
    await waitFor(
      async () => {
        if (child.process.exitCode !== null || child.process.signalCode !== null) {
          ends += 1;
          expectEnd(child);
          await child.close();
          child = startChildProgram(PROGRAM, env);
        }
        return (await drill.deadLetters()).length === 1;
      },
      { timeoutMs: 170_000, intervalMs: 250, description: 'the crashing record dead-lettered' },
    );
    await drill.expectAllAppliedOnce(good, 1);
    return ends;
  } catch (err) {
    throw new Error(
      `${String(err)}\nthe child ended ${ends} times; its last output:\n${child.output().slice(-4_000)}`,
      { cause: err },
    );
  } finally {
    await child.close();
  }
}

describe('a record that crashes the process', () => {
  it(
    'is dead-lettered as "crashed the consumer" after the delivery limit, counted across restarts',
    async () => {
      const drill = await startDrill({
        stack,
        prefix: 'crash_loop',
        policy: {
          deadlineMs: 300_000,
          lateRetryWindowMs: 5_000,
          deliveryLimit: DELIVERY_LIMIT,
          retryBaseMs: 100,
          retryCapMs: 1_000,
        },
        partitions: 1,
      });
      const before = drill.nextEvents(20);
      const crasher = {
        type: COUNTED_TYPE,
        key: 'k-crash',
        schemaId: drill.schemaId,
        payload: { key: 'k-crash', seq: 1, behaviour: 'crash' },
      };
      const after = drill.nextEvents(20);
      const ids = await produceCloudEvents(drill.producer, drill.registry, drill.topic, [...before, crasher, ...after]);
      const crasherId = ids[before.length]!;
      const good = ids.filter((id) => id !== crasherId);

      const exits = await runUntilDeadLettered(drill, childEnv(drill, stack), good, (child) => {
        expect(child.process.exitCode).toBe(3); // the handler's exit, not a start failure
      });

      // One crash inside a group (the culprit unknown yet), then the limit's attempts alone.
      expect(exits).toBe(DELIVERY_LIMIT + 1);
      const [dead] = await drill.deadLetters();
      expect(dead?.ceId).toBe(crasherId);
      expect(dead?.reason).toBe('crashed the consumer');
      expect(dead?.attempts).toBe(DELIVERY_LIMIT);
      expect((await appliedRows(drill.pool, drill.name)).some((row) => row.event_id === crasherId)).toBe(false);
      await drill.close();
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'is dead-lettered as "crashed the consumer" when decoding it exhausts the heap',
    async () => {
      const drill = await startDrill({
        stack,
        prefix: 'crash_decode',
        policy: {
          deadlineMs: 300_000,
          lateRetryWindowMs: 5_000,
          deliveryLimit: DELIVERY_LIMIT,
          retryBaseMs: 100,
          retryCapMs: 1_000,
        },
        partitions: 1,
      });
      const bombSchemaId = await registerTestSchema(drill.registry, `${drill.name}.Bomb`, arrayBombSchema(drill.name));
      const goodBefore = await produceCloudEvents(drill.producer, drill.registry, drill.topic, drill.nextEvents(10));
      const bombId = randomUUID();
      const headers = routerHeaders({ id: bombId, type: COUNTED_TYPE, key: 'k-bomb', time: new Date().toISOString() });
      await produceRawMessages(drill.producer, drill.topic, [
        { key: 'k-bomb', value: arrayBombValue(bombSchemaId, BOMB_ITEMS), headers },
      ]);
      const goodAfter = await produceCloudEvents(drill.producer, drill.registry, drill.topic, drill.nextEvents(10));

      // A small heap, so the array fills it in a few seconds.
      // The decode limits would refuse the bomb before it allocates: raised to its size, so decoding itself crashes.
      const env = childEnv(drill, stack, {
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${BOMB_HEAP_MB}`.trim(),
        CONSUMER_MAX_COLLECTION_ITEMS: String(BOMB_ITEMS),
      });
      const ends = await runUntilDeadLettered(drill, env, [...goodBefore, ...goodAfter], (child) => {
        expect(child.output()).toMatch(/heap out of memory/i); // the decode's end, not a start failure
      });

      // One end inside a group (the culprit unknown yet), then the limit's attempts alone.
      expect(ends).toBe(DELIVERY_LIMIT + 1);
      const [dead] = await drill.deadLetters();
      expect(dead?.ceId).toBe(bombId);
      expect(dead?.reason).toBe('crashed the consumer');
      expect(dead?.attempts).toBe(DELIVERY_LIMIT);
      await drill.close();
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'is not what a process killed while an infrastructure failure holds the partition leaves behind: the good record is applied, not dead-lettered',
    async () => {
      const drill = await startDrill({
        stack,
        prefix: 'crash_held',
        policy: {
          deadlineMs: 300_000,
          lateRetryWindowMs: 5_000,
          deliveryLimit: DELIVERY_LIMIT,
          retryBaseMs: 100,
          retryCapMs: 1_000,
        },
        partitions: 1,
      });
      const good = await produceCloudEvents(drill.producer, drill.registry, drill.topic, drill.nextEvents(5));
      // The registry's origin answers 404 on every ccompat path: not the record's fault, so the partition is held.
      const away = childEnv(drill, stack, { SCHEMA_REGISTRY_URL: new URL(stack.registryUrl).origin });
      // One kill more than the delivery limit allows: each during a hold, none during an attempt that the record could be blamed for.
      for (let kill = 0; kill < DELIVERY_LIMIT; kill += 1) {
        const child = startChildProgram(PROGRAM, away);
        try {
          await waitFor(() => child.output().includes('the infrastructure failed; retrying'), {
            timeoutMs: 60_000,
            intervalMs: 100,
            description: `the held partition's retry (kill ${kill + 1})`,
          });
          await child.killHard();
        } catch (err) {
          throw new Error(`${String(err)}\nchild output:\n${child.output().slice(-4_000)}`, { cause: err });
        } finally {
          await child.close();
        }
      }
      const child = startChildProgram(PROGRAM, childEnv(drill, stack));
      try {
        await drill.expectAllAppliedOnce(good);
      } catch (err) {
        throw new Error(`${String(err)}\nchild output:\n${child.output().slice(-4_000)}`, { cause: err });
      } finally {
        await child.close();
      }
      expect(await drill.deadLetters()).toEqual([]);
      await drill.close();
    },
    TEST_TIMEOUT_MS,
  );
});
