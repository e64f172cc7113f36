/**
 * A small rehearsal on the redundant stack (docs/rehearsal.md): a SECOND stack started with two
 * Connect workers, three Kafka nodes (replication 3, min.insync.replicas 2) and the seat database's
 * standby, and two instances of each consumer (npm run rehearsal -- --drill
 * connect,kafka,consumer,failover, under the machine-wide rehearsal lock); its own home, free
 * ports, the downloads shared, small heaps. During the crowd each drill kills with -9 the instance
 * really doing the work (the worker running the outbox task, the node leading the busiest
 * partition, the consumer instance owning its group's busiest partition), a survivor takes the
 * work over (read from Connect's status, Kafka's metadata and the group coordinator by the
 * rehearsal, and every half second during the run by the test's own clients as well), and last the primary's postmaster is killed, the standby promoted and the
 * connector moved with its failover slot. Its verdicts are counted again from the seat database,
 * the second stack's Kafka read by the test's own client and each consumer's inbox and effect
 * tables, and must agree with its record. The second stack is left failed over, then stopped and
 * removed.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorStatus, isRunning } from '../../connectors/connect-client.js';
import { liveConnectorConfig } from '../../connectors/connector-lifecycle.js';
import { createKafka, ensureTopics } from '../../lib/kafka.js';
import { waitFor } from '../../lib/wait.js';
import { localConnectApi, stackEndpoints, stackLayout } from '../../stack/config.js';
import { stackStatus, type ComponentStatus } from '../../stack/launcher.js';
import { FAILED_OVER_MARKER, postgresHome } from '../../stack/postgres.js';
import { adminUrl } from '../../stack/postgres-standby.js';
import { isAlive, portOpen, tailFile } from '../../stack/processes.js';
import { REDUNDANT_STACK, ownStack } from '../../stack/own-stack.js';
import { testLogger } from '../support/seat-pipeline.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';
import { drillProblems, independentOutcome, stackSources, topicEnds } from './support/independent-outcome.js';
import { runRehearsal } from './support/run-rehearsal.js';
import { type ClusterSnapshot, watchCluster } from './support/cluster-watch.js';
import type { DrillRecord } from '../../rehearsal/record.js';

requireStack();

const reportDir = mkdtempSync(join(tmpdir(), 'stagefront-redundant-drills-'));

const second = await ownStack(join(stackLayout().home, 'redundant-drills-test'), REDUNDANT_STACK);
const { env, layout } = second;
const stackCommand = (command: 'start' | 'stop') => second.command(command);
const removeStackFolders = () => second.remove();

/**
 * A consumer group joined once on the fresh Kafka, so that its group coordinator (and
 * __consumer_offsets) exists before the rehearsal's consumers must be ready within their minute.
 */
async function warmUpConsumerGroups(): Promise<void> {
  const kafka = createKafka({
    brokers: stackEndpoints(layout).kafkaBrokers,
    clientId: 'redundant-drills-warm-up',
    logger: testLogger,
  });
  const admin = kafka.admin();
  await admin.connect();
  // ensureTopics, not kafkajs's waitForLeaders: on a fresh broker under load the metadata lags the
  // creation (UNKNOWN_TOPIC_OR_PARTITION), which kafkajs's own wait throws at once.
  await ensureTopics(admin, [{ topic: 'redundant-drills-warm-up', numPartitions: 1 }]).finally(() =>
    admin.disconnect(),
  );
  // A short fetch wait: disconnect waits for the fetch in flight (kafkajs's default wait is 5 s).
  const consumer = kafka.consumer({ groupId: 'redundant-drills-warm-up', maxWaitTimeInMs: 100 });
  let joined = false;
  consumer.on(consumer.events.GROUP_JOIN, () => (joined = true));
  await consumer.connect();
  await consumer.subscribe({ topics: ['redundant-drills-warm-up'] });
  await consumer.run({ eachMessage: async () => undefined });
  try {
    await waitFor(() => joined, {
      timeoutMs: 240_000,
      intervalMs: 500,
      description: "a consumer group to be joined on the second stack's Kafka",
    });
  } finally {
    await consumer.disconnect();
  }
}

/** The last lines of each of the rehearsal's program logs (they go when the stack is removed). */
function programLogs(): string {
  if (!existsSync(layout.logDir)) return '';
  return readdirSync(layout.logDir)
    .filter((name) => name.startsWith('rehearsal-') || name === 'postgres-endpoint.log')
    .map(
      (name) =>
        `--- ${name}\n${tailFile(join(layout.logDir, name), 5)
          .split('\n')
          .map((line) => line.slice(0, 400))
          .join('\n')}`,
    )
    .join('\n');
}

let started: ComponentStatus[] = [];

beforeAll(async () => {
  stackCommand('stop'); // what a crashed run may have left
  removeStackFolders();
  stackCommand('start');
  started = await stackStatus(layout);
  await warmUpConsumerGroups();
}, 600_000);

afterAll(async () => {
  // The rehearsal leaves the second stack failed over; it is stopped and removed, nothing of it left running.
  stackCommand('stop');
  const after = await stackStatus(layout);
  removeStackFolders();
  rmSync(reportDir, { recursive: true, force: true });
  for (const component of [...started, ...after]) {
    expect(isAlive(component.pid), `${component.name} process`).toBe(false);
    expect(await portOpen(component.port), `${component.name} port ${component.port}`).toBe(false);
  }
}, 300_000);

describe('a rehearsal with the drills on the redundant stack', () => {
  it('kills the instance doing the work of Connect, Kafka and a consumer, then the primary, with -9 during the crowd; survivors take the work over, and nothing was lost, doubled or dead-lettered', async () => {
    expect(started.filter((c) => !c.healthy).map((c) => c.name)).toEqual([]);
    expect(started.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'postgres',
        'postgres-standby',
        'postgres-endpoint',
        'kafka',
        'kafka-2',
        'kafka-3',
        'connect',
        'connect-2',
      ]),
    );

    const show = uniqueName('redundant').replace(/_/g, '-');
    const sources = stackSources(layout);
    const from = await topicEnds(sources);
    const watch = watchCluster({
      brokers: sources.brokers,
      connect: localConnectApi(stackEndpoints(layout).connectUrls.join(',')),
      connectorName: 'seat-outbox',
      topics: sources.topics,
      group: 'seat-availability',
    });
    let snapshots: ClusterSnapshot[] = [];
    const rehearsal = runRehearsal({
      show,
      drills: 'connect,kafka,consumer,failover',
      lockTimeoutS: 600,
      env: {
        ...env,
        REHEARSAL_BUYERS: '300',
        REHEARSAL_CONSUMER_INSTANCES: '2',
        REHEARSAL_COUNTDOWN_MS: '0',
        REHEARSAL_DRILL_SPACING_MS: '10000',
        REHEARSAL_DRILL_DOWN_MS: '2000',
        // Correctness and alerts only: a busy machine's time to fresh must not fail this test.
        REHEARSAL_JUDGE_FRESHNESS: 'no',
        REHEARSAL_REPORT_DIR: reportDir,
      },
      diagnostics: programLogs,
    });
    const { record, tail, text } = await rehearsal.finally(async () => {
      snapshots = await watch.stop();
    });

    // Nothing lost, nothing good dead-lettered (a dead-lettered event is not in its consumer's inbox as
    // handled), nothing doubled: counted again from the new primary, Kafka and the consumers' tables.
    const outcome = await independentOutcome(show, sources, from);
    expect(outcome.problems, tail).toEqual([]);
    expect(outcome.orders).toBeGreaterThan(0);
    expect(outcome.orders).toBe(record.crowd.confirmed);
    // The record's verdicts say the same.
    expect(
      record.checks.filter((c) => !c.ok),
      tail,
    ).toEqual([]);
    expect(record.checks.map((c) => c.name)).toContain('every drilled part came back');
    expect(record.crowd.errors).toBe(0);

    expect(record.drills.map((d) => d.target)).toEqual(['connect', 'kafka', 'consumer', 'failover']);
    for (const [k, drill] of record.drills.entries()) {
      const next = record.drills[k + 1]?.killedAt ?? Infinity;
      expect(drill.killedAt).toBeGreaterThanOrEqual(record.startedAt);
      expect(drill.backAt, `${drill.target} came back`).not.toBeNull();
      expect(drill.caughtUpAt ?? null, `the consumers caught up after ${drill.target}`).not.toBeNull();
      expect(drillProblems(outcome, drill.killedAt, next), drill.target).toEqual([]);
      expect(drill.verdict.ok, drill.verdict.detail).toBe(true);
    }
    const [connect, kafka, consumer, failover] = record.drills;

    // Each of the first three killed the instance doing the work, and a survivor took it over.
    const survivors = {
      connect: ['connect', 'connect-2'],
      kafka: ['kafka', 'kafka-2', 'kafka-3'],
      consumer: ['seat-availability', 'seat-availability-2'],
    };
    for (const drill of [connect, kafka, consumer]) {
      const target = drill?.target as keyof typeof survivors;
      expect(survivors[target], JSON.stringify(drill)).toContain(drill?.victim);
      expect((drill?.notes ?? []).join(' ')).toMatch(
        target === 'connect'
          ? /killed connect(-2)?: it runs task 0 of seat-outbox/
          : target === 'kafka'
            ? /killed kafka(-\d)?: it leads .+-\d+, the busiest partition/
            : /killed seat-availability(-2)?: it owns .+-\d+, the busiest partition of group seat-availability/,
      );
      expect(
        survivors[target].filter((name) => name !== drill?.victim),
        JSON.stringify(drill),
      ).toContain(drill?.takenOverBy);
      expect(drill?.takenOverAt ?? 0).toBeGreaterThanOrEqual(drill?.killedAt ?? Infinity);
      // The survivor had the work before the victim was started again.
      expect(drill?.takenOverAt ?? Infinity).toBeLessThanOrEqual(drill?.restartedAt ?? 0);
    }
    // The test's own reading of the cluster says the same: before the kill the victim did the work,
    // and after it, before the victim answered again, a survivor did.
    const before = (drill: DrillRecord | undefined) => snapshots.filter((x) => x.at < (drill?.killedAt ?? 0)).at(-1);
    const between = (drill: DrillRecord | undefined) =>
      snapshots.filter((x) => x.at > (drill?.killedAt ?? Infinity) && x.at <= (drill?.backAt ?? 0));
    const workerPort = (name: string | null | undefined) =>
      layout.settings.connectPort + (name === 'connect-2' ? 1 : 0);
    const portOf = (workerId: string | undefined) => Number(workerId?.split(':').at(-1));
    expect(portOf(before(connect)?.taskWorker), 'the task ran on the killed worker').toBe(workerPort(connect?.victim));
    expect(
      between(connect).some((x) => portOf(x.taskWorker) === workerPort(connect?.takenOverBy)),
      'the survivor ran the task before the victim was back',
    ).toBe(true);
    const partitionIn = (drill: DrillRecord | undefined) =>
      /(?:leads|owns) (\S+-\d+), the busiest partition/.exec((drill?.notes ?? []).join(' '))?.[1] ?? '';
    const nodeOf = (name: string | null | undefined) => (name === 'kafka' ? 1 : Number(name?.split('-')[1]));
    expect(before(kafka)?.leaders[partitionIn(kafka)], 'the killed node led the partition').toBe(nodeOf(kafka?.victim));
    expect(
      between(kafka).some((x) => x.leaders[partitionIn(kafka)] === nodeOf(kafka?.takenOverBy)),
      'the survivor led it before the victim was back',
    ).toBe(true);
    const ownerBefore = before(consumer)?.owners[partitionIn(consumer)];
    expect(ownerBefore, 'a member owned the partition before the kill').toMatch(/^seat-availability-\d+$/);
    expect(
      between(consumer).some((x) => ![undefined, ownerBefore].includes(x.owners[partitionIn(consumer)])),
      'another member owned it before the victim was back',
    ).toBe(true);

    expect(failover?.restartedAt ?? 0).toBeGreaterThan(failover?.killedAt ?? Infinity);
    expect(outcome.outbox.filter((row) => row.created_ms >= (failover?.killedAt ?? Infinity)).length).toBeGreaterThan(
      0,
    );
    expect((failover?.notes ?? []).join(' ')).toMatch(/standby promoted: primary on port \d+, timeline \d+/);
    expect(text).toContain(`  PASS: All ${record.checks.length} checks passed, 4 drills held\n`);
    console.info(text);

    // The stack is left failed over: the standby is the primary, the old one marked and down, the connector on the new primary.
    expect(existsSync(join(postgresHome(layout), FAILED_OVER_MARKER))).toBe(true);
    const { rows } = await adminQuery(
      adminUrl(layout.settings.postgresStandbyPort),
      'select pg_is_in_recovery() as recovering',
    );
    expect(rows).toEqual([{ recovering: false }]);
    const status = await stackStatus(layout);
    expect(status.filter((c) => !c.healthy).map((c) => c.name)).toEqual(['postgres']);
    const connectUrl = stackEndpoints(layout).connectUrl;
    await waitFor(async () => isRunning(await connectorStatus(localConnectApi(connectUrl), 'seat-outbox')), {
      timeoutMs: 60_000,
      intervalMs: 500,
      description: 'the outbox connector to be RUNNING on the new primary',
    });
    const config = await liveConnectorConfig(localConnectApi(connectUrl), 'seat-outbox');
    expect(config['database.port']).toBe(String(layout.settings.postgresStandbyPort));
  }, 900_000);
});
