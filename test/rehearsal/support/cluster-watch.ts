/**
 * The test's own reading of who does the work while a rehearsal runs: every half second, the worker
 * Connect's status names for the outbox task, each event partition's leader in Kafka's metadata,
 * and each partition's owner in one consumer group, with the time. The drills' claims (this
 * instance did the work, that survivor took it over) are checked against it, not against the
 * rehearsal's own record.
 */
import { type ConnectApi, connectorStatus } from '../../../connectors/connect-client.js';
import { AssignerProtocol, createKafka } from '../../../lib/kafka.js';
import { sleep } from '../../../lib/wait.js';
import { testLogger } from '../../support/seat-pipeline.js';

export interface ClusterSnapshot {
  at: number;
  /** The outbox task's worker_id (host:port) while RUNNING. */
  taskWorker?: string;
  /** `<topic>-<partition>` → the leader's node id. */
  leaders: Record<string, number>;
  /** `<topic>-<partition>` → the owning member's client id. */
  owners: Record<string, string>;
}

export function watchCluster(options: {
  brokers: string[];
  connect: ConnectApi;
  connectorName: string;
  topics: string[];
  group: string;
}): { stop(): Promise<ClusterSnapshot[]> } {
  const kafka = createKafka({
    brokers: options.brokers,
    clientId: 'test-cluster-watch',
    logger: testLogger,
    connectionTimeoutMs: 1000,
    requestTimeoutMs: 3000,
    retry: { retries: 1, initialRetryTime: 100 },
  });
  const snapshots: ClusterSnapshot[] = [];
  let stopped = false;
  const readTask = async (snapshot: ClusterSnapshot): Promise<void> => {
    const status = await connectorStatus(options.connect, options.connectorName).catch(() => undefined);
    const task = status?.tasks.find((t) => t.id === 0);
    if (task?.state === 'RUNNING' && task.worker_id !== undefined) snapshot.taskWorker = task.worker_id;
  };
  const readKafka = async (snapshot: ClusterSnapshot): Promise<void> => {
    const admin = kafka.admin();
    try {
      await admin.connect();
      const { topics } = await admin.fetchTopicMetadata({ topics: options.topics });
      for (const topic of topics)
        for (const p of topic.partitions)
          if (p.leader >= 0) snapshot.leaders[`${topic.name}-${p.partitionId}`] = p.leader;
      const group = (await admin.describeGroups([options.group])).groups[0];
      if (group?.state === 'Stable')
        for (const member of group.members) {
          if (member.memberAssignment.length === 0) continue;
          const assignment = AssignerProtocol.MemberAssignment.decode(member.memberAssignment)?.assignment ?? {};
          for (const [topic, partitions] of Object.entries(assignment))
            for (const partition of partitions) snapshot.owners[`${topic}-${partition}`] = member.clientId;
        }
    } catch {
      // a node down: this snapshot holds what was read
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  };
  const poll = async (): Promise<void> => {
    while (!stopped) {
      const at = Date.now();
      const snapshot: ClusterSnapshot = { at, leaders: {}, owners: {} };
      await Promise.all([readTask(snapshot), readKafka(snapshot)]);
      snapshots.push(snapshot);
      await sleep(Math.max(0, 500 - (Date.now() - at)));
    }
  };
  const running = poll();
  return {
    async stop() {
      stopped = true;
      await running;
      return snapshots;
    },
  };
}
