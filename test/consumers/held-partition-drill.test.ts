/**
 * One held key holds its partition only: while the consumer database refuses the writes of one key
 * (a trigger raises SQLSTATE 25006, read-only, for that key while a flag row is set), the events of
 * the consumer's other partitions keep being applied, in order per key; the held partition's lag
 * and failure series are on /metrics throughout; after the fault the held key's events are applied
 * exactly once, in order, and nothing is dead-lettered. With every partition held, the member
 * stays in its group past the session timeout (kafkajs heartbeats between its empty fetches), a
 * rebalance and a stop while paused lose nothing and count nothing against the records.
 *
 * The runtime with the drill's counted consumer on produced CloudEvents (the shape Debezium's
 * router publishes), not the seat pipeline: what is under test is the runtime's hold.
 */
import { Partitioners } from '../../lib/kafka.js';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack } from '../support/stack.js';
import { appliedRows, assertKeyOrder } from './helpers/counted-events.js';
import { type Drill, startDrill } from './helpers/drill.js';
import { metricValue } from './helpers/metrics.js';

const stack = requireStack();
installLeakGuard();

const PARTITIONS = 3;
const HELD_KEY = 'k3';

/** The partition kafkajs's default partitioner (the drill's producer) gives `key`. */
function partitionOfKey(topic: string, key: string): number {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: PARTITIONS }, (_, partitionId) => ({
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
    partitionErrorCode: 0,
  }));
  return partitioner({ topic, partitionMetadata, message: { key, value: null } });
}

/** While a row is in `drill_fault`, writes of `key` (every key for `*`) fail as a read-only database would refuse them. */
async function installKeyFault(
  drill: Drill,
  key: string,
): Promise<{ start(): Promise<void>; repair(): Promise<void> }> {
  await drill.db.admin(/* sql */ `create table drill_fault (key text primary key)`);
  await drill.db.admin(`grant select on drill_fault to ${drill.db.role}`);
  await drill.db.admin(/* sql */ `
    create function drill_refuse_held_key() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from drill_fault where key in (new.key, '*')) then
        raise exception 'cannot execute INSERT in a read-only transaction (drill: key %)', new.key using errcode = '25006';
      end if;
      return new;
    end $$`);
  await drill.db.admin(
    /* sql */ `create trigger drill_refuse_held_key before insert on applied_events for each row execute function drill_refuse_held_key()`,
  );
  return {
    start: async () => void (await drill.db.admin(`insert into drill_fault (key) values ($1)`, [key])),
    repair: async () => void (await drill.db.admin(`delete from drill_fault`)),
  };
}

async function scrape(drill: Drill): Promise<string> {
  return (await fetch(drill.metricsUrl, { signal: AbortSignal.timeout(5_000) })).text();
}

/** Partitions whose failure series (SQLSTATE 25006) are on /metrics now. */
async function heldPartitions(drill: Drill): Promise<Set<string>> {
  const held = new Set<string>();
  for (let partition = 0; partition < PARTITIONS; partition += 1) {
    if (
      metricValue(await scrape(drill), 'consumer_failing_event_age_seconds', {
        partition: String(partition),
        error: '25006',
      }) > 0
    )
      held.add(String(partition));
  }
  return held;
}

const POLICY = { deadlineMs: 300_000, lateRetryWindowMs: 5_000, deliveryLimit: 3, retryBaseMs: 100, retryCapMs: 1_000 };
/** The drill's consumers' session timeout (helpers/drill.ts). */
const SESSION_TIMEOUT_MS = 6_000;

describe('a key whose writes fail', () => {
  it('holds its own partition only: the others keep flowing, and it is applied once, in order, after the fault', async () => {
    const drill = await startDrill({ stack, prefix: 'held_partition', policy: POLICY, partitions: PARTITIONS });
    const fault = await installKeyFault(drill, HELD_KEY);
    const heldPartition = partitionOfKey(drill.topic, HELD_KEY);
    const freeKeys = new Set(
      ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9'].filter(
        (key) => partitionOfKey(drill.topic, key) !== heldPartition,
      ),
    );
    expect(freeKeys.size).toBeGreaterThan(0);
    const keyOf = new Map<string, string>();
    const produce = async (count: number) => {
      const records = drill.nextEvents(count);
      const ids = await drill.load(records, 500);
      ids.forEach((id, index) => keyOf.set(id, records[index]!.key));
      return ids;
    };
    const freeOf = (ids: readonly string[]) => ids.filter((id) => freeKeys.has(keyOf.get(id)!));
    const appliedIds = async () => new Set((await appliedRows(drill.pool, drill.name)).map((row) => row.event_id));

    await drill.startConsumer();
    const warmUp = await produce(30);
    await waitFor(async () => (await appliedIds()).size === warmUp.length, {
      timeoutMs: 60_000,
      description: 'the warm-up events applied',
    });

    await fault.start();
    const first = await produce(30);
    // The held partition's failure series, over HTTP, labelled with the SQLSTATE and the partition.
    await waitFor(
      async () =>
        metricValue(await scrape(drill), 'consumer_failing_event_age_seconds', {
          partition: String(heldPartition),
          error: '25006',
        }) > 0,
      {
        timeoutMs: 30_000,
        description: 'the failure series of the held partition',
      },
    );
    // Produced while the key is held: the other partitions take these in new fetches, or not at all.
    const second = await produce(30);
    const third = await produce(30);
    const duringHold = [...freeOf(first), ...freeOf(second), ...freeOf(third)];
    await waitFor(
      async () => {
        const applied = await appliedIds();
        return duringHold.every((id) => applied.has(id));
      },
      { timeoutMs: 30_000, description: 'the events of the other partitions applied while the key is held' },
    );

    const held = [...first, ...second, ...third].filter((id) => keyOf.get(id) === HELD_KEY);
    const appliedDuringHold = await appliedIds();
    expect(held.some((id) => appliedDuringHold.has(id))).toBe(false);
    assertKeyOrder(await appliedRows(drill.pool, drill.name));
    const metrics = await scrape(drill);
    expect(
      metricValue(metrics, 'consumer_failing_event_age_seconds', { partition: String(heldPartition), error: '25006' }),
    ).toBeGreaterThan(0);
    // The held partition is behind, and says so.
    expect(metricValue(metrics, 'consumer_lag_records', { partition: String(heldPartition) })).toBeGreaterThan(0);

    await fault.repair();
    await drill.expectAllAppliedOnce([...warmUp, ...first, ...second, ...third]);
    await waitFor(async () => (await drill.failingCodes()).length === 0, {
      timeoutMs: 30_000,
      description: 'the failure series resolved',
    });
    await waitFor(
      async () => metricValue(await scrape(drill), 'consumer_lag_records', { partition: String(heldPartition) }) === 0,
      {
        timeoutMs: 30_000,
        description: 'the held partition caught up',
      },
    );
    await drill.close();
  });

  it('with every partition held: the member stays past its session timeout, and a rebalance and a stop while paused lose nothing', async () => {
    const drill = await startDrill({ stack, prefix: 'held_all', policy: POLICY, partitions: PARTITIONS });
    const fault = await installKeyFault(drill, '*');
    let joins = 0;
    drill.events.on('groupJoined', () => (joins += 1));
    const first = await drill.startConsumer();
    const warmUp = await drill.load(drill.nextEvents(30), 500);
    await waitFor(async () => (await appliedRows(drill.pool, drill.name)).length === warmUp.length, {
      timeoutMs: 60_000,
      description: 'the warm-up events applied',
    });

    await fault.start();
    const during = await drill.load(drill.nextEvents(30), 500);
    await waitFor(async () => (await heldPartitions(drill)).size === PARTITIONS, {
      timeoutMs: 30_000,
      description: 'every partition held',
    });
    const heldAt = Date.now();
    const joinsWhenHeld = joins;
    // Twice the session timeout with every partition paused: a member that stopped heartbeating is out by then.
    await waitFor(
      async () => Date.now() - heldAt > 2 * SESSION_TIMEOUT_MS && (await heldPartitions(drill)).size === PARTITIONS,
      {
        timeoutMs: 4 * SESSION_TIMEOUT_MS + 30_000,
        description: 'every partition still held twice the session timeout later',
      },
    );
    expect(joins).toBe(joinsWhenHeld);
    expect(first.isReady()).toBe(true);

    // A rebalance while paused: the second member takes some partitions; both hold what they own.
    const second = await drill.startConsumer();
    await waitFor(() => joins >= joinsWhenHeld + 2 && first.isReady(), {
      timeoutMs: 60_000,
      description: 'both members joined',
    });
    const more = await drill.load(drill.nextEvents(30), 500);
    await waitFor(async () => (await heldPartitions(drill)).size === PARTITIONS, {
      timeoutMs: 30_000,
      description: 'every partition held again after the rebalance',
    });
    // A stop while paused: no timer left behind (the leak guard and the worker's exit), the partitions move on.
    await first.close();
    await waitFor(() => second.isReady(), {
      timeoutMs: 60_000,
      description: 'the second member owning every partition',
    });
    expect((await appliedRows(drill.pool, drill.name)).length).toBe(warmUp.length);

    await fault.repair();
    await drill.expectAllAppliedOnce([...warmUp, ...during, ...more]);
    await waitFor(async () => (await drill.failingCodes()).length === 0, {
      timeoutMs: 30_000,
      description: 'the failure series resolved',
    });
    await drill.close();
  });
});
