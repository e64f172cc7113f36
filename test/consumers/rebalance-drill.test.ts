/**
 * A second member joins the consumer group while the first is held inside a batch, then leaves,
 * all under load: the batch caught by the rebalance is given up uncommitted and delivered again,
 * and the inbox keeps every effect to once. Nothing lost, nothing doubled, per-key order kept,
 * nothing dead-lettered.
 *
 * The rebalance is made to catch a batch in flight, not left to chance: a `gated` record holds the
 * first member inside its batch (in the transaction, nothing committed) until the group
 * coordinator shows the second member owning every partition; only then does the test open the
 * gate. The drill proves it was not vacuous from what the test saw itself: the coordinator shows
 * both members owning partitions once the first is back, and the held batch was delivered to both
 * members. It counts once the group has committed the topic to its end.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack } from '../support/stack.js';
import { appliedRows } from './helpers/counted-events.js';
import { startDrill } from './helpers/drill.js';
import { closedGate } from './helpers/gate.js';
import { waitForGroup } from './helpers/group-members.js';
import { rebalancePreconditionProblems, redeliveries } from './helpers/redelivery.js';

const stack = requireStack();
installLeakGuard();

const PARTITIONS = 6;

describe('a member joins the group while a batch is in flight, and leaves', () => {
  it('applies every event exactly once, in key order, with nothing dead-lettered, after the held batch was delivered to both members', async () => {
    const gate = closedGate();
    const drill = await startDrill({
      stack,
      prefix: 'rebalance',
      policy: { deadlineMs: 300_000, lateRetryWindowMs: 5_000, deliveryLimit: 3, retryBaseMs: 100, retryCapMs: 1_000 },
      counted: { whenLate: 'dead-letter', gate },
      partitions: PARTITIONS,
    });
    let groupJoins = 0;
    drill.events.on('groupJoined', () => (groupJoins += 1));
    await drill.startConsumer();
    // 50 ms per event, so each member has batches in flight when the leave comes; one gated record.
    const before = drill.nextEvents(60, { behaviour: 'slow' });
    const gated = drill.nextEvents(1, { behaviour: 'gated' })[0]!;
    const load = drill.load([...before, gated, ...drill.nextEvents(340, { behaviour: 'slow' })], 16_000);
    await waitFor(() => gate.reached > 0, { timeoutMs: 60_000, description: 'the first member held at the gate' });
    const heldKey = `${gated.key}#${String((gated.payload as { seq: number }).seq)}`;
    expect(drill.deliveries.filter((d) => `${d.key}#${d.seq}` === heldKey).map((d) => d.member)).toEqual([0]);

    const second = await drill.startConsumer();
    // While the first member is still held inside its batch, the coordinator (asked by an admin
    // client of the test's) gives every partition to one member: the second, as the first is held.
    await waitForGroup(drill.kafka, drill.name, drill.topic, { members: 1, partitions: PARTITIONS });
    expect(gate.isOpen).toBe(false);
    gate.open();
    // The first member's commit is refused; it joins again and both own partitions.
    const both = await waitForGroup(drill.kafka, drill.name, drill.topic, { members: 2, partitions: PARTITIONS });
    const appliedAtJoin = (await appliedRows(drill.pool, drill.name)).length;
    await waitFor(async () => (await appliedRows(drill.pool, drill.name)).length >= appliedAtJoin + 60, {
      timeoutMs: 60_000,
      description: 'both members applying',
    });
    await second.close();
    const ids = await load;
    await drill.expectAllAppliedOnce(ids);
    expect(groupJoins).toBeGreaterThanOrEqual(4); // the first member, the second's join, the first's rejoin, the leave

    expect(rebalancePreconditionProblems(both.members, drill.deliveries)).toEqual([]);
    const { redelivered, movedInFlight } = redeliveries(drill.deliveries);
    // The batch the gate held, in particular, was delivered to the other member too.
    expect(movedInFlight).toContain(heldKey);
    console.info(
      `rebalance drill: ${drill.deliveries.length} deliveries of ${ids.length} events; ${redelivered.length} delivered again, ${movedInFlight.length} of them to the other member; owners while both were in: ${both.members.map((m) => `[${m.partitions.join(',')}]`).join(' ')}`,
    );
    await drill.close();
  });
});
