/**
 * A small rehearsal with the failover drill (npm run rehearsal -- --drill failover, under the
 * machine-wide rehearsal lock) on a SECOND stack started with STACK_POSTGRES_STANDBY=yes: its own
 * home, every port a free one, the downloads shared, small heaps. During the crowd the primary's
 * postmaster is killed with -9, the standby promoted and the connector moved with its failover
 * slot; the programs follow through the primary endpoint. Its verdicts are counted again from the
 * seat database, the second stack's Kafka read by the test's own client and each consumer's inbox
 * and effect tables, and must agree with its record. The second stack is left failed over by the
 * rehearsal, then stopped and removed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorStatus, isRunning } from '../../connectors/connect-client.js';
import { liveConnectorConfig } from '../../connectors/connector-lifecycle.js';
import { createKafka, ensureTopics } from '../../lib/kafka.js';
import { waitFor } from '../../lib/wait.js';
import { localConnectApi, projectRoot, stackEndpoints, stackLayout, stackSettings } from '../../stack/config.js';
import { stackStatus, type ComponentStatus } from '../../stack/launcher.js';
import { FAILED_OVER_MARKER, postgresHome } from '../../stack/postgres.js';
import { adminUrl, standbyHome } from '../../stack/postgres-standby.js';
import { isAlive, portOpen, tailFile } from '../../stack/processes.js';
import { freePort } from '../slot-monitor/support/alertmanager-process.js';
import { testLogger } from '../support/seat-pipeline.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';
import { drillProblems, independentOutcome, stackSources, topicEnds } from './support/independent-outcome.js';
import { runRehearsal } from './support/run-rehearsal.js';

requireStack();

const reportDir = mkdtempSync(join(tmpdir(), 'stagefront-failover-drill-'));

const mainLayout = stackLayout();
const env: Record<string, string> = {
  STACK_HOME: join(mainLayout.home, 'failover-drill-test'),
  STACK_DIST: mainLayout.dist,
  STACK_POSTGRES_STANDBY: 'yes',
  STACK_POSTGRES_BINARIES: 'auto',
  STACK_KAFKA_HEAP_MB: '320',
  STACK_CONNECT_HEAP_MB: '320',
  STACK_REGISTRY_HEAP_MB: '384',
  STACK_CONNECT_WORKERS: '1',
  STACK_KAFKA_BROKERS: '1',
};
for (const setting of Object.values(stackSettings.settings)) {
  if (setting.env.endsWith('_PORT')) env[setting.env] = String(await freePort());
}
const layout = stackLayout({ ...process.env, ...env });

function stackCommand(command: 'start' | 'stop'): void {
  const result = spawnSync('npx', ['tsx', 'stack/cli.ts', command], {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 500_000,
  });
  if (result.status !== 0)
    throw new Error(`stack ${command} exited ${result.status}:\n${result.stdout}\n${result.stderr}`.slice(-4000));
}

function removeStackFolders(): void {
  for (const folder of [layout.home, standbyHome(layout), dirname(postgresHome(layout))])
    rmSync(folder, { recursive: true, force: true });
}

/**
 * A consumer group joined once on the fresh Kafka, so that its group coordinator (and
 * __consumer_offsets) exists before the rehearsal's consumers must be ready within their minute.
 */
async function warmUpConsumerGroups(): Promise<void> {
  const kafka = createKafka({
    brokers: stackEndpoints(layout).kafkaBrokers,
    clientId: 'failover-drill-warm-up',
    logger: testLogger,
  });
  const admin = kafka.admin();
  await admin.connect();
  // ensureTopics, not kafkajs's waitForLeaders: on a fresh broker under load the metadata lags the
  // creation (UNKNOWN_TOPIC_OR_PARTITION), which kafkajs's own wait throws at once.
  await ensureTopics(admin, [{ topic: 'failover-drill-warm-up', numPartitions: 1 }]).finally(() => admin.disconnect());
  const consumer = kafka.consumer({ groupId: 'failover-drill-warm-up' });
  let joined = false;
  consumer.on(consumer.events.GROUP_JOIN, () => (joined = true));
  await consumer.connect();
  await consumer.subscribe({ topics: ['failover-drill-warm-up'] });
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

describe('a rehearsal with the failover drill (a second stack with a standby)', () => {
  it('kills the primary with -9 during the crowd, promotes the standby, and its record says nothing was lost, doubled or dead-lettered', async () => {
    expect(started.filter((c) => !c.healthy).map((c) => c.name)).toEqual([]);
    expect(started.map((c) => c.name)).toEqual(
      expect.arrayContaining(['postgres', 'postgres-standby', 'postgres-endpoint']),
    );

    const show = uniqueName('failover').replace(/_/g, '-');
    const sources = stackSources(layout);
    const from = await topicEnds(sources);
    const { record, tail, text } = await runRehearsal({
      show,
      drills: 'failover',
      lockTimeoutS: 600,
      env: {
        ...env,
        REHEARSAL_BUYERS: '250',
        REHEARSAL_COUNTDOWN_MS: '0',
        REHEARSAL_DRILL_SPACING_MS: '10000',
        REHEARSAL_DRILL_DOWN_MS: '2000',
        // Correctness and alerts only: a busy machine's time to fresh must not fail this test.
        REHEARSAL_JUDGE_FRESHNESS: 'no',
        REHEARSAL_REPORT_DIR: reportDir,
      },
      diagnostics: programLogs,
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

    expect(record.drills.map((d) => d.target)).toEqual(['failover']);
    const [drill] = record.drills;
    expect(drill?.killedAt ?? 0).toBeGreaterThanOrEqual(record.startedAt);
    expect(drill?.restartedAt ?? 0).toBeGreaterThan(drill?.killedAt ?? Infinity);
    expect(drill?.backAt, 'the failover finished').not.toBeNull();
    expect(drill?.caughtUpAt ?? null, 'the consumers caught up after it').not.toBeNull();
    expect(drillProblems(outcome, drill?.killedAt ?? 0, Infinity)).toEqual([]);
    expect(outcome.outbox.filter((row) => row.created_ms >= (drill?.killedAt ?? Infinity)).length).toBeGreaterThan(0);
    expect(drill?.verdict.ok, drill?.verdict.detail).toBe(true);
    expect((drill?.notes ?? []).join(' ')).toMatch(/standby promoted: primary on port \d+, timeline \d+/);
    expect(record.crowd.errors).toBe(0);
    expect(text).toContain(`  PASS: All ${record.checks.length} checks passed, 1 drills held\n`);
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
