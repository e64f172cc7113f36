/** Who owns what in a consumer group, as the group coordinator describes it. */
import { AssignerProtocol } from '../../../lib/kafka.js';
import type { Kafka } from '../../../lib/kafka.js';
import { waitFor } from '../../../lib/wait.js';

interface GroupMember {
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
