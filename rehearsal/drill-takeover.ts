/**
 * On a stack with more than one of a part, which instance a drill kills and who takes its work
 * over: the Connect worker running the outbox task, the Kafka node leading the busiest event
 * partition, the consumer instance owning the busiest partition of its group, each read from the
 * cluster (Connect's status, Kafka's metadata and the group coordinator), and afterwards the
 * survivor that runs that task, leads that partition or owns it. With one instance there is no
 * choice and nobody to take over.
 */
import { connectorStatus, type ConnectApi } from '../connectors/connect-client.js';
import { AssignerProtocol, createKafka, type Kafka } from '../lib/kafka.js';
import type { Logger } from '../lib/logger.js';
import { sleep } from '../lib/wait.js';
import { stackEndpoints, type StackLayout } from '../stack/config.js';
import { stackKafkaClientOptions } from '../stack/kafka-security.js';
import { consumerClientId } from '../consumers/runtime/client-id.js';
import {
  assignedPartitions,
  busiestPartition,
  connectWorkerComponent,
  kafkaNodeComponent,
  ownerOf,
  type GroupMemberAssignment,
  type PartitionEnd,
} from './drill-victims.js';

/** The instance a drill kills, why that one, and (with survivors) who holds its work now. */
export interface Victim {
  /** The stack component or the rehearsal program killed. */
  name: string;
  /** Why this one, for the report ("runs task 0 of seat-outbox"). */
  why?: string;
  /** With survivors: the one doing the work now if it is not the victim, else undefined. */
  takenOverBy?: () => Promise<string | undefined>;
}

export interface TakeoverContext {
  layout: StackLayout;
  /** Connect's workers (every one, so a call works while one is down) and the user that calls them. */
  connect: ConnectApi;
  connectorName: string;
  /** The event topics the connector writes. */
  topics: readonly string[];
  /** A consumer's instances as the rehearsal's program names, and the pid each runs as now. */
  instancesOf: (consumer: string) => readonly string[];
  pidOf: (program: string) => number | undefined;
  logger: Logger;
}

/** How long apart the two readings of the end offsets that find the busiest partition are. */
const BUSIEST_WINDOW_MS = 1000;

function stackKafka(context: TakeoverContext): Kafka {
  return createKafka({
    brokers: stackEndpoints(context.layout).kafkaBrokers,
    clientId: 'rehearsal-drills',
    logger: context.logger,
    connectionTimeoutMs: 2000,
    requestTimeoutMs: 5000,
    retry: { retries: 2, initialRetryTime: 200 },
    security: stackKafkaClientOptions(context.layout),
  });
}

async function withAdmin<T>(kafka: Kafka, use: (admin: ReturnType<Kafka['admin']>) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    return await use(admin);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

async function endOffsets(admin: ReturnType<Kafka['admin']>, topics: readonly string[]): Promise<PartitionEnd[]> {
  const ends = await Promise.all(
    topics.map(async (topic) =>
      (await admin.fetchTopicOffsets(topic)).map((p) => ({ topic, partition: p.partition, offset: Number(p.high) })),
    ),
  );
  return ends.flat();
}

/** The partition of `topics` (only `among` them, when given) that grew most over a second. */
async function busiest(
  admin: ReturnType<Kafka['admin']>,
  topics: readonly string[],
  among?: readonly { topic: string; partition: number }[],
): Promise<PartitionEnd | undefined> {
  const keep = (ends: PartitionEnd[]) =>
    among === undefined
      ? ends
      : ends.filter((e) => among.some((a) => a.topic === e.topic && a.partition === e.partition));
  const before = keep(await endOffsets(admin, topics));
  await sleep(BUSIEST_WINDOW_MS);
  return busiestPartition(before, keep(await endOffsets(admin, topics)));
}

async function leadership(
  kafka: Kafka,
  topic: string,
  partition: number,
): Promise<{ leader: number; isr: number[] } | undefined> {
  return withAdmin(kafka, async (admin) => {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    const found = topics[0]?.partitions.find((p) => p.partitionId === partition);
    return found === undefined || found.leader < 0 ? undefined : { leader: found.leader, isr: found.isr };
  });
}

async function groupMembers(kafka: Kafka, groupId: string): Promise<GroupMemberAssignment[]> {
  return withAdmin(kafka, async (admin) => {
    const { groups } = await admin.describeGroups([groupId]);
    const group = groups[0];
    if (group === undefined || group.state !== 'Stable') return [];
    return group.members.map((member) => ({
      clientId: member.clientId,
      assignment:
        member.memberAssignment.length === 0
          ? {}
          : (AssignerProtocol.MemberAssignment.decode(member.memberAssignment)?.assignment ?? {}),
    }));
  });
}

/** Thrown when a part has survivors but the cluster does not say (yet) which instance does the work. */
class VictimUnknown extends Error {}

/** The worker running the outbox connector's task 0; with others, the one running it after the kill. */
async function connectVictim(context: TakeoverContext): Promise<Victim> {
  const { connectPort, connectWorkers } = context.layout.settings;
  if (connectWorkers === 1) return { name: 'connect' };
  const workerOfTask = async () => {
    const status = await connectorStatus(context.connect, context.connectorName).catch(() => undefined);
    const task = status?.tasks.find((t) => t.id === 0);
    if (task?.state !== 'RUNNING' || task.worker_id === undefined) return undefined;
    return connectWorkerComponent(task.worker_id, connectPort, connectWorkers);
  };
  const name = await workerOfTask();
  if (name === undefined)
    throw new VictimUnknown(`task 0 of ${context.connectorName} is not RUNNING on a known worker`);
  return {
    name,
    why: `runs task 0 of ${context.connectorName}`,
    takenOverBy: async () => {
      const now = await workerOfTask();
      return now === name ? undefined : now;
    },
  };
}

/** The node leading the busiest partition of the event topics; with replicas, its new leader after the kill. */
async function kafkaVictim(context: TakeoverContext): Promise<Victim> {
  if (context.layout.settings.kafkaBrokerCount === 1) return { name: 'kafka' };
  const kafka = stackKafka(context);
  const partition = await withAdmin(kafka, (admin) => busiest(admin, context.topics));
  if (partition === undefined) throw new VictimUnknown(`no partition of ${context.topics.join(', ')}`);
  const leader = (await leadership(kafka, partition.topic, partition.partition))?.leader;
  if (leader === undefined) throw new VictimUnknown(`${partition.topic}-${partition.partition} has no leader`);
  const name = kafkaNodeComponent(leader);
  return {
    name,
    why: `leads ${partition.topic}-${partition.partition}, the busiest partition`,
    // Another leader, with the victim out of the in-sync replicas: not an older view of the partition.
    takenOverBy: async () => {
      const now = await leadership(kafka, partition.topic, partition.partition).catch(() => undefined);
      return now === undefined || now.leader === leader || now.isr.includes(leader)
        ? undefined
        : kafkaNodeComponent(now.leader);
    },
  };
}

/** The instance of `consumer` owning its group's busiest partition; with others, its owner after the kill. */
async function consumerVictim(context: TakeoverContext, consumer: string): Promise<Victim> {
  const instances = context.instancesOf(consumer);
  if (instances.length <= 1) return { name: consumer };
  const kafka = stackKafka(context);
  const members = await groupMembers(kafka, consumer);
  const owned = assignedPartitions(members);
  if (owned.length === 0) throw new VictimUnknown(`group ${consumer} is not stable with partitions assigned`);
  const topics = [...new Set(owned.map((p) => p.topic))];
  const partition = await withAdmin(kafka, (admin) => busiest(admin, topics, owned));
  const instanceOf = (clientId: string | undefined) =>
    instances.find((program) => {
      const pid = context.pidOf(program);
      return pid !== undefined && consumerClientId(consumer, pid) === clientId;
    });
  const owner = partition === undefined ? undefined : ownerOf(members, partition.topic, partition.partition);
  const name = instanceOf(owner?.clientId);
  if (partition === undefined || owner === undefined || name === undefined)
    throw new VictimUnknown(
      `the owner of group ${consumer}'s busiest partition is none of the rehearsal's instances (${owner?.clientId ?? 'no owner'})`,
    );
  return {
    name,
    why: `owns ${partition.topic}-${partition.partition}, the busiest partition of group ${consumer}`,
    takenOverBy: async () => {
      const now = ownerOf(await groupMembers(kafka, consumer).catch(() => []), partition.topic, partition.partition);
      if (now === undefined || now.clientId === owner.clientId) return undefined;
      return instanceOf(now.clientId) ?? now.clientId;
    },
  };
}

/** Which instance a drill of `target` kills (`consumer`: the consumer whose turn it is). */
export async function chooseVictim(
  context: TakeoverContext,
  target: 'connect' | 'kafka' | 'consumer',
  consumer: string,
): Promise<Victim> {
  if (target === 'connect') return connectVictim(context);
  if (target === 'kafka') return kafkaVictim(context);
  return consumerVictim(context, consumer);
}
