/** Who owns what in a consumer group, as the group coordinator describes it. */
import { AssignerProtocol } from '../../../lib/kafka.js';
import type { Kafka } from '../../../lib/kafka.js';
import { waitFor } from '../../../lib/wait.js';

export interface GroupMember {
  memberId: string;
  clientId: string;
  /** Partitions of the topic assigned to this member, ascending. */
  partitions: number[];
}

export interface GroupState {
  state: string;
  members: GroupMember[];
}

async function describeGroup(kafka: Kafka, groupId: string, topic: string): Promise<GroupState> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups([groupId]);
    const group = groups[0];
    if (group === undefined) return { state: 'Dead', members: [] };
    const members = group.members.map((member) => {
      const assignment =
        member.memberAssignment.length === 0 ? null : AssignerProtocol.MemberAssignment.decode(member.memberAssignment);
      return {
        memberId: member.memberId,
        clientId: member.clientId,
        partitions: [...(assignment?.assignment[topic] ?? [])].sort((a, b) => a - b),
      };
    });
    return { state: group.state, members };
  } finally {
    await admin.disconnect();
  }
}

/** True when the group is stable and its members own each of the topic's `partitions` exactly once, every member at least one. */
function ownsAllPartitions(group: GroupState, partitions: number): boolean {
  const owned = group.members.flatMap((m) => m.partitions).sort((a, b) => a - b);
  return (
    group.state === 'Stable' &&
    owned.length === partitions &&
    owned.every((p, i) => p === i) &&
    group.members.every((m) => m.partitions.length > 0)
  );
}

/** Waits until `members` members own all `partitions` partitions of `topic`; returns the group. */
export async function waitForGroup(
  kafka: Kafka,
  groupId: string,
  topic: string,
  expected: { members: number; partitions: number; timeoutMs?: number },
): Promise<GroupState> {
  let last: GroupState = { state: 'unknown', members: [] };
  await waitFor(
    async () => {
      last = await describeGroup(kafka, groupId, topic);
      return last.members.length === expected.members && ownsAllPartitions(last, expected.partitions);
    },
    {
      timeoutMs: expected.timeoutMs ?? 60_000,
      intervalMs: 250,
      description: `${expected.members} members of ${groupId} owning all ${expected.partitions} partitions`,
    },
  );
  return last;
}

/** The partitions of `topics` whose offset committed by `groupId` is short of the end of the partition, as `topic/partition committed/end`. */
async function committedShortOfEnd(kafka: Kafka, groupId: string, topics: readonly string[]): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const short: string[] = [];
    const committed = await admin.fetchOffsets({ groupId, topics: [...topics] });
    for (const topic of topics) {
      const mine = new Map(
        (committed.find((c) => c.topic === topic)?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]),
      );
      for (const { partition, high, low } of await admin.fetchTopicOffsets(topic)) {
        if (high === low) continue; // nothing was ever there to commit
        const at = mine.get(partition) ?? -1n;
        if (at < BigInt(high)) short.push(`${topic}/${partition} ${at}/${high}`);
      }
    }
    return short;
  } finally {
    await admin.disconnect();
  }
}

/**
 * Waits until the group has committed every partition of `topics` to its end (read by an admin
 * client of its own, not the members'): after that nothing of what is on the topics will be
 * delivered again, so an exactly-once count taken then also sees a late duplicate.
 */
export async function waitForCommittedToEnd(
  kafka: Kafka,
  groupId: string,
  topics: readonly string[],
  timeoutMs = 60_000,
): Promise<void> {
  let short: string[] = [];
  try {
    await waitFor(
      async () => {
        short = await committedShortOfEnd(kafka, groupId, topics);
        return short.length === 0;
      },
      { timeoutMs, intervalMs: 250, description: `${groupId} to commit ${topics.join(', ')} to the end` },
    );
  } catch (err) {
    throw new Error(`${String(err)} Committed short of the end: ${short.join(', ')}`, { cause: err });
  }
}
