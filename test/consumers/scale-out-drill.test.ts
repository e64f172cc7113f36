/**
 * Scale-out under load: instances of the real seat availability program (each a process of its
 * own, with its own Kafka client) share one consumer group on a topic of 6 partitions while the
 * seat service sells. Three start; one is stopped with SIGTERM; a fourth joins; another is killed
 * with -9, so its partitions move only when its session times out, with its batches uncommitted.
 * Every rebalance lands while batches are in flight: a trigger on the read model makes each
 * seat's write take a few milliseconds and logs it. Then: every seat event in the inbox, no
 * effect written twice, each seat's effects in the order of its records on the topic, the read
 * model equal to the seat database, nothing dead-lettered, and the two remaining instances
 * owning all six partitions. The counting waits until the group has committed every partition to
 * its end (read by an admin client of the test's), so a duplicate delivered late is counted too.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { deadLetterTopicFor } from '../../events/catalogue.js';
import { readDeadLetters } from '../../consumers/redrive/read-dead-letters.js';
import { sleep, waitFor } from '../../lib/wait.js';
import { seatId } from '../../seat-service/inventory.js';
import type { SeatService } from '../../seat-service/service.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, useSeatPipeline } from '../support/seat-pipeline.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { allRecords, inboxIds, outboxIds, seatStateDifferences } from '../slot-recovery/support/delivery-checks.js';
import { type ChildConsumer, startChildProgram } from './helpers/child-consumer.js';
import { waitForCommittedToEnd, waitForGroup } from './helpers/group-members.js';
import { consumerDatabase, testKafka } from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();

const PARTITIONS = 6;
const ROWS = 30;
const SEATS_PER_ROW = 20;
const SEAT_EVENTS = 'com.stagefront.seat.';
const show = uniqueName('scaleout').toLowerCase();

/**
 * Buyers until `stop`: each holds one or two adjacent seats, then mostly gives them back (so a
 * seat sees many events, whose order matters) and sometimes buys them. A call that fails (the
 * shared machine overloaded) is counted and the buyer goes on: the drill is about the consumers.
 */
async function sell(
  service: SeatService,
  buyer: string,
  stop: () => boolean,
): Promise<{ holds: number; errors: string[] }> {
  let holds = 0;
  const errors: string[] = [];
  while (!stop()) {
    const row = 1 + Math.floor(Math.random() * ROWS);
    const first = 1 + Math.floor(Math.random() * (SEATS_PER_ROW - 1));
    const seats = Math.random() < 0.5 ? [first] : [first, first + 1];
    try {
      const held = await service.hold({
        showId: show,
        seatIds: seats.map((n) => seatId(show, 'A', row, n)),
        buyerId: buyer,
      });
      await sleep(40);
      if (held.status !== 'held') continue;
      holds += 1;
      if (Math.random() < 0.1) await service.confirm({ holdId: held.holdId, buyerEmail: `${buyer}@example.test` });
      else await service.release(held.holdId);
    } catch (error) {
      errors.push(error instanceof Error ? error.message : String(error));
    }
    await sleep(40);
  }
  return { holds, errors };
}

describe('instances of one consumer join and leave its group under load', () => {
  const pipeline = useSeatPipeline(
    show,
    { section: 'A', rows: ROWS, seatsPerRow: SEATS_PER_ROW, priceCents: 4500 },
    () => ({ TOPIC_PARTITIONS: String(PARTITIONS) }),
  );
  const children: ChildConsumer[] = [];
  let printed = false;
  afterAll(() => {
    if (!printed)
      for (const child of children)
        console.error(`instance pid ${child.process.pid}:\n${child.output().slice(-4_000)}`);
  });

  it('handles every event once, in key order, and the remaining instances own every partition', async () => {
    const { topics, adminUrl, service } = pipeline();
    const group = uniqueName('scaleout_seats');
    const kafka = testKafka(stack, group);
    const db = await consumerDatabase('scaleout_inbox');
    // Every write of a seat row is logged with the event that caused it, and takes 10 ms, so a
    // partition's batch lasts long enough for each membership change to land inside one.
    await db.pool.query(/* sql */ `
      create table effect_log (n bigserial primary key, seat_id text not null, event_id text not null);
      create function log_seat_effect() returns trigger language plpgsql as $$
      begin
        insert into effect_log (seat_id, event_id) values (new.seat_id, new.last_event_id);
        perform pg_sleep(0.01);
        return new;
      end $$;
      create trigger seat_effect after insert or update on seat_availability_seats for each row execute function log_seat_effect();`);
    const env = {
      CONSUMER_DATABASE_URL: db.url,
      KAFKA_BROKERS: stack.kafkaBrokers.join(','),
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      TOPIC_PREFIX: pipeline().connector.topicPrefix,
      CONSUMER_GROUP_ID: group,
      METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
      // A killed member is noticed after 6 s (the broker's smallest session timeout).
      CONSUMER_SESSION_TIMEOUT_MS: '6000',
      EVENT_DEADLINE_MS: '300000',
    };
    const instance = () => {
      const child = startChildProgram('consumers/seat-availability/main.ts', env);
      children.push(child);
      return child;
    };
    const handled = async () =>
      (await db.pool.query<{ n: number }>('select count(*)::int as n from inbox where consumer = $1', [group])).rows[0]
        ?.n ?? 0;
    /** Waits until the group settles on `members` owning all partitions, then until `more` further events are handled by it. */
    const settle = async (members: number, more = 150) => {
      const owners = await waitForGroup(kafka, group, topics.seat, {
        members,
        partitions: PARTITIONS,
        timeoutMs: 90_000,
      });
      const from = await handled();
      await waitFor(async () => (await handled()) >= from + more, {
        timeoutMs: 90_000,
        description: `${more} more events handled by ${members} instances`,
      });
      return owners;
    };

    let stopped = false;
    const sales = Promise.all(['b1', 'b2', 'b3', 'b4'].map((buyer) => sell(service, buyer, () => stopped)));
    try {
      const [a, b] = [instance(), instance(), instance()];
      await settle(3);
      await a!.close(); // SIGTERM: the member leaves the group; its uncommitted batches are redelivered elsewhere
      expect(a!.process.exitCode).toBe(0);
      await settle(2);
      instance(); // a fourth joins
      await settle(3);
      await b!.killHard(); // -9: no leave, no commit; its partitions move when its session times out
      const last = await settle(2);
      expect(last.members).toHaveLength(2);
    } finally {
      stopped = true;
    }
    const buyers = await sales;
    const holds = buyers.reduce((sum, b) => sum + b.holds, 0);
    const errors = buyers.flatMap((b) => b.errors);
    expect(holds).toBeGreaterThan(100);

    const published = await outboxIds(adminUrl, SEAT_EVENTS);
    await waitFor(async () => (await handled()) >= published.length, {
      timeoutMs: 90_000,
      description: `all ${published.length} seat events handled`,
    });
    // Counted once the group has committed the topic to its end: nothing is delivered again after, so a late duplicate is seen.
    await waitForCommittedToEnd(kafka, group, [topics.seat], 90_000);
    expect(await inboxIds(db.pool, group)).toEqual([...published].sort());

    const { rows: doubled } = await db.pool.query(
      'select event_id, count(*)::int as n from effect_log group by event_id having count(*) > 1',
    );
    expect(doubled).toEqual([]);

    // Per key: the effects written for a seat are its records on the topic, in offset order (a
    // seat's events folded into one write in a batch leave only the last of them in the log).
    const collector = await collectRecords([topics.seat]);
    const records = await allRecords(collector.records, [topics.seat]);
    await collector.stop();
    const onTopic = new Map<string, string[]>();
    for (const record of [...records].sort(
      (x, y) => x.partition - y.partition || Number(BigInt(x.offset) - BigInt(y.offset)),
    )) {
      onTopic.set(record.key, [...(onTopic.get(record.key) ?? []), record.headers.ce_id ?? '']);
    }
    const { rows: effects } = await db.pool.query<{ seat_id: string; event_id: string }>(
      'select seat_id, event_id from effect_log order by n',
    );
    const position = new Map<string, number>();
    const outOfOrder: string[] = [];
    for (const effect of effects) {
      const at = onTopic.get(effect.seat_id)?.indexOf(effect.event_id) ?? -1;
      if (at < 0 || at <= (position.get(effect.seat_id) ?? -1))
        outOfOrder.push(`${effect.seat_id}: ${effect.event_id} at ${at}, after ${position.get(effect.seat_id)}`);
      position.set(effect.seat_id, at);
    }
    expect(outOfOrder).toEqual([]);
    const { rows: model } = await db.pool.query<{ seat_id: string; last_event_id: string }>(
      'select seat_id, last_event_id from seat_availability_seats',
    );
    expect(model.filter((seat) => seat.last_event_id !== onTopic.get(seat.seat_id)?.at(-1))).toEqual([]);
    expect(model.length).toBe(onTopic.size);
    expect(await seatStateDifferences(adminUrl, db.pool)).toEqual([]);

    expect(await readDeadLetters(kafka, deadLetterTopicFor(topics.seat))).toEqual([]);
    const remaining = await waitForGroup(kafka, group, topics.seat, { members: 2, partitions: PARTITIONS });
    console.info(
      `scale-out drill: ${holds} holds, ${published.length} seat events on ${PARTITIONS} partitions, ${effects.length} seat writes, ${errors.length} seat service calls failed${errors.length > 0 ? ` (first: ${errors[0]})` : ''}; remaining instances own ${remaining.members.map((m) => `[${m.partitions.join(',')}]`).join(' ')}`,
    );

    for (const child of children) await child.close();
    printed = true;
    await db.close();
  });
});
