/**
 * What proves a rebalance drill was not vacuous, from what the test saw itself rather than from
 * the runtime's own events: the group coordinator's assignment while both members were in, and
 * every delivery of a record to a member's decoder (the test's parser records it; a delivery the
 * inbox then skips as a duplicate is recorded too). Pure, so each way it can fail is shown in
 * test/unit/consumers/redelivery.test.ts.
 */
import type { GroupMember } from './group-members.js';

/** One record handed to one member (the n-th member started, from 0), named by its key and sequence number. */
export interface Delivery {
  member: number;
  key: string;
  seq: number;
}

export interface Redeliveries {
  /** Events delivered more than once, to whichever members: `key#seq`. */
  redelivered: string[];
  /** Of those, the ones delivered to two different members (their partition moved with the batch in flight). */
  movedInFlight: string[];
}

export function redeliveries(deliveries: readonly Delivery[]): Redeliveries {
  const byEvent = new Map<string, Delivery[]>();
  for (const d of deliveries) {
    const id = `${d.key}#${d.seq}`;
    byEvent.set(id, [...(byEvent.get(id) ?? []), d]);
  }
  const redelivered = [...byEvent].filter(([, ds]) => ds.length > 1);
  return {
    redelivered: redelivered.map(([id]) => id).sort(),
    movedInFlight: redelivered
      .filter(([, ds]) => new Set(ds.map((d) => d.member)).size > 1)
      .map(([id]) => id)
      .sort(),
  };
}

/**
 * Why the drill proves nothing, if it does not: fewer than two members owned partitions while
 * both were in the group, or no rebalance caught a batch in flight (no record was delivered to
 * two members). Empty when the drill tested what it claims.
 */
export function rebalancePreconditionProblems(
  owners: readonly GroupMember[],
  deliveries: readonly Delivery[],
): string[] {
  const problems: string[] = [];
  const owning = owners.filter((m) => m.partitions.length > 0);
  if (owning.length < 2)
    problems.push(
      `only ${owning.length} member(s) owned partitions while both were in the group (${owners.map((m) => `[${m.partitions.join(',')}]`).join(' ') || 'no members'})`,
    );
  const { redelivered, movedInFlight } = redeliveries(deliveries);
  if (movedInFlight.length === 0)
    problems.push(
      `no record was delivered to two members (${redelivered.length} delivered twice to one member): no rebalance caught a batch in flight`,
    );
  return problems;
}
