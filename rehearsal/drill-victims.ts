/**
 * Which instance a drill kills when there are several: the one really doing the work, read from
 * the cluster itself (Connect's task status, Kafka's partition leaders, the consumer group's
 * assignment), never merely the first one started. Pure: the reads are done by the caller.
 */

/** A partition of a topic and its end offset at a moment. */
export interface PartitionEnd {
  topic: string;
  partition: number;
  offset: number;
}

/**
 * The partition that grew most between two readings of the end offsets (ties: the one holding
 * more, then the first topic and lowest partition): the busiest one while the crowd runs. Undefined
 * when there is no partition at all.
 */
export function busiestPartition(
  before: readonly PartitionEnd[],
  after: readonly PartitionEnd[],
): PartitionEnd | undefined {
  const earlier = new Map(before.map((p) => [`${p.topic}\u0000${p.partition}`, p.offset]));
  let best: { end: PartitionEnd; grew: number } | undefined;
  for (const end of after) {
    const grew = end.offset - (earlier.get(`${end.topic}\u0000${end.partition}`) ?? 0);
    if (best === undefined || grew > best.grew || (grew === best.grew && end.offset > best.end.offset))
      best = { end, grew };
  }
  return best?.end;
}

/** The stack component that is Kafka node `nodeId` (stack/config.ts kafkaNodes: node 1 is `kafka`). */
export function kafkaNodeComponent(nodeId: number): string {
  return nodeId === 1 ? 'kafka' : `kafka-${nodeId}`;
}

/**
 * The stack component of the Connect worker a status names (`worker_id`, its advertised
 * host:port): worker n listens on the first worker's port + n - 1 (stack/connect.ts). Undefined for
 * a worker id that is none of the stack's `workers`.
 */
export function connectWorkerComponent(workerId: string, firstPort: number, workers: number): string | undefined {
  const port = Number(/:(\d+)$/.exec(workerId)?.[1]);
  const n = port - firstPort + 1;
  if (!Number.isInteger(n) || n < 1 || n > workers) return undefined;
  return n === 1 ? 'connect' : `connect-${n}`;
}

/** A member of a consumer group as the coordinator describes it, its assignment decoded. */
export interface GroupMemberAssignment {
  clientId: string;
  assignment: Readonly<Record<string, readonly number[]>>;
}

/** The member that owns `topic`'s `partition`; undefined while nobody does (a rebalance). */
export function ownerOf(
  members: readonly GroupMemberAssignment[],
  topic: string,
  partition: number,
): GroupMemberAssignment | undefined {
  return members.find((m) => m.assignment[topic]?.includes(partition) === true);
}

/** The partitions a group's members own, by topic: the ones a consumer drill picks the busiest of. */
export function assignedPartitions(members: readonly GroupMemberAssignment[]): { topic: string; partition: number }[] {
  return members.flatMap((m) =>
    Object.entries(m.assignment).flatMap(([topic, partitions]) =>
      partitions.map((partition) => ({ topic, partition })),
    ),
  );
}
