/**
 * The Connect cluster drill: two workers of one group run the outbox connector; the worker that
 * runs its task is killed with -9 under a steady stream of holds. The other worker must take the
 * task over on its own (no restart of anything), streaming must resume, and every outbox row must
 * be on Kafka (duplicates allowed, each the same event again). Then the killed worker comes back
 * and the group is whole again. Before that, on the same two workers, the REST API's credentials
 * (test/connectors/support/rest-auth-cases.ts).
 */
import { basename } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorStatus, isRunning, type ConnectorStatus } from '../../connectors/connect-client.js';
import { applyOutboxConnector } from '../../connectors/outbox-connector.js';
import { connectorSettings } from '../../connectors/settings.js';
import { PipelineError } from '../../lib/errors.js';
import { createKafka } from '../../lib/kafka.js';
import { parseSettings } from '../../lib/settings.js';
import { sleep, waitFor } from '../../lib/wait.js';
import { seatId } from '../../seat-service/inventory.js';
import { LOCAL_CONNECT_ENV, localConnectApi, stackEndpoints, stackLayout } from '../../stack/config.js';
import { STACK_CONNECT_CLUSTER, connectComponents, workerProperties } from '../../stack/connect.js';
import { stackStatus } from '../../stack/launcher.js';
import { isAlive } from '../../stack/processes.js';
import { type ConnectWorkerCluster, startConnectCluster } from '../support/connect-worker.js';
import { restAuthCases } from './support/rest-auth-cases.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, testLogger, useSeatPipeline } from '../support/seat-pipeline.js';
import { freePort } from '../slot-monitor/support/alertmanager-process.js';
import { adminQuery, endpoints, requireStack, uniqueName } from '../support/stack.js';

requireStack();
installLeakGuard();

const SHOW = 'drill';
const SEATS_PER_ROW = 25;
const ROWS = 12;

/** The stack's own Connect worker (pid and health): the drill must leave it alone. */
async function sharedConnect(): Promise<{ pid: number | undefined; healthy: boolean }> {
  const status = (await stackStatus()).find((c) => c.name === 'connect');
  return { pid: status?.pid, healthy: status?.healthy ?? false };
}

/** The members of a Connect cluster's group, as the Kafka group coordinator sees them. */
async function groupMembers(groupId: string): Promise<{ state: string; members: number }> {
  const admin = createKafka({
    brokers: endpoints().kafkaBrokers,
    clientId: 'test-connect-drill',
    logger: testLogger,
  }).admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups([groupId]);
    const group = groups[0];
    return { state: group?.state ?? 'missing', members: group?.members.length ?? 0 };
  } finally {
    await admin.disconnect();
  }
}

/** Holds one seat at a time at a steady pace until stopped or out of seats; resolves to how many it held. */
function steadyHolds(hold: (i: number) => Promise<void>, everyMs: number): { stop: () => Promise<number> } {
  let stopped = false;
  const done = (async () => {
    let i = 0;
    for (; !stopped && i < ROWS * SEATS_PER_ROW; i += 1) {
      const began = Date.now();
      await hold(i);
      await sleep(Math.max(0, everyMs - (Date.now() - began)));
    }
    return i;
  })();
  return {
    stop: async () => {
      stopped = true;
      return done;
    },
  };
}

describe('STACK_CONNECT_WORKERS and a CONNECT_URL of several workers', () => {
  const layoutWith = (env: Record<string, string>) =>
    stackLayout({ STACK_HOME: '/tmp/stagefront-drill-layout', ...env });

  it('the stack runs that many workers of its one group, one port up each, with logs of their own; one by default, as before', () => {
    const single = connectComponents(layoutWith({}));
    expect(single.map((c) => [c.name, c.port])).toEqual([['connect', 18083]]);
    const layout = layoutWith({ STACK_CONNECT_WORKERS: '3' });
    const workers = connectComponents(layout);
    expect(workers.map((c) => [c.name, c.port, basename(c.logFile)])).toEqual([
      ['connect', 18083, 'connect.log'],
      ['connect-2', 18084, 'connect-2.log'],
      ['connect-3', 18085, 'connect-3.log'],
    ]);
    expect(workers.slice(1).every((c) => c.dependsOn.includes('connect'))).toBe(true);
    const properties = [18083, 18084, 18085].map((port) => workerProperties(layout, STACK_CONNECT_CLUSTER, port));
    expect(
      properties.every(
        (p) => p.includes('group.id=stagefront-connect\n') && p.includes('config.storage.topic=_connect-configs\n'),
      ),
    ).toBe(true);
    expect(properties.map((p) => /rest\.advertised\.port=(\d+)/.exec(p)?.[1])).toEqual(['18083', '18084', '18085']);
    expect(stackEndpoints(layout).connectUrls).toEqual([
      'http://127.0.0.1:18083',
      'http://127.0.0.1:18084',
      'http://127.0.0.1:18085',
    ]);
    // The first worker's properties are those of the one-worker stack: a running stack is not restarted.
    expect(properties[0]).toBe(workerProperties(layoutWith({})));
    expect(() =>
      connectComponents(layoutWith({ STACK_CONNECT_WORKERS: '3', STACK_ALERTMANAGER_PORT: '18085' })),
    ).toThrow(
      /STACK_CONNECT_WORKERS=3 puts a Connect worker on port 18085, which STACK_ALERTMANAGER_PORT already uses/,
    );
  });

  it('the connector command takes several URLs: a worker that does not answer is passed over; none answering is one error naming each', async () => {
    const dead = [`http://127.0.0.1:${await freePort()}`, `http://127.0.0.1:${await freePort()}`];
    const config = parseSettings(connectorSettings, {
      CONNECT_URL: `${dead[0]}, ${endpoints().connectUrl}/`,
      ...LOCAL_CONNECT_ENV,
      CONNECTOR_SEAT_DB_URL: 'postgres://x:y@127.0.0.1:1/z',
    });
    expect(config.connectUrl).toBe(`${dead[0]},${endpoints().connectUrl}`);
    // Asked of the stack's own worker after the dead one: a connector nobody has is an answer (404).
    expect(await connectorStatus(config, uniqueName('nobody'))).toBeUndefined();
    const error = await connectorStatus(localConnectApi(dead.join(',')), 'nobody').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PipelineError);
    expect((error as PipelineError).code).toBe('connect_unreachable');
    expect((error as Error).message).toContain(`none of the 2 Kafka Connect workers answers (${dead[0]}: `);
    expect((error as Error).message).toContain(dead[1]);
    expect(() =>
      parseSettings(connectorSettings, {
        CONNECT_URL: 'http://127.0.0.1:18083,not a url',
        ...LOCAL_CONNECT_ENV,
        CONNECTOR_SEAT_DB_URL: 'postgres://x:y@127.0.0.1:1/z',
      }),
    ).toThrow(/CONNECT_URL/);
  });
});

describe('a Connect cluster of two workers: the worker running the outbox task killed with -9', () => {
  let cluster: ConnectWorkerCluster | undefined;
  beforeAll(async () => {
    cluster = await startConnectCluster('drill_connect', 2);
  }, 240_000);
  afterAll(async () => cluster?.stop());
  const connect = (): ConnectWorkerCluster => {
    if (cluster === undefined) throw new Error('the Connect cluster of this file did not start (see its beforeAll)');
    return cluster;
  };
  // CONNECT_URL names both workers: the connector command and the teardown reach whichever answers.
  const pipeline = useSeatPipeline(
    SHOW,
    { section: 'D', rows: ROWS, seatsPerRow: SEATS_PER_ROW, priceCents: 4000 },
    () => ({ CONNECT_URL: connect().connectUrl, ...LOCAL_CONNECT_ENV }),
  );

  // The REST API's credentials, on these two workers before one is killed (issue 20).
  restAuthCases(connect, pipeline);

  it('the other worker takes the task over, streaming resumes, nothing is lost; the killed worker rejoins', async () => {
    const sharedBefore = await sharedConnect();
    const name = pipeline().connector.connectorName;
    const collector = await collectRecords([pipeline().topics.seat]);
    const load = steadyHolds(async (i) => {
      const seat = seatId(SHOW, 'D', Math.floor(i / SEATS_PER_ROW) + 1, (i % SEATS_PER_ROW) + 1);
      const held = await pipeline().service.hold({ showId: SHOW, seatIds: [seat], buyerId: `drill-${i}` });
      if (held.status !== 'held') throw new Error(`${seat}: ${held.status}`);
    }, 50);
    let loadStopped = false;
    try {
      await waitFor(() => collector.records.length >= 20, {
        timeoutMs: 60_000,
        description: 'the stream to be flowing',
      });

      // The worker that runs the task, by Connect's own status.
      const before = await connectorStatus(localConnectApi(connect().connectUrl), name);
      const runningOn = before?.tasks[0]?.worker_id;
      const victim = connect().workers.find((w) => w.workerId === runningOn);
      const survivor = connect().workers.find((w) => w.workerId !== runningOn);
      if (victim === undefined || survivor === undefined)
        throw new Error(
          `task 0 runs on ${runningOn ?? 'no worker'}, not on one of ${connect()
            .workers.map((w) => w.workerId)
            .join(', ')}`,
        );
      const pid = victim.pid();
      if (pid === undefined) throw new Error(`the worker ${victim.workerId} that runs the task is not running`);

      process.kill(pid, 'SIGKILL');
      const beforeKill = new Set(await outboxIds(pipeline().adminUrl));
      await waitFor(() => !isAlive(pid), { timeoutMs: 10_000, description: 'the killed worker to be gone' });

      // Taken over by the survivor on its own: nobody restarts anything.
      const takenOver = await waitFor(
        async () => {
          const status = await connectorStatus(localConnectApi(survivor.url), name);
          return status !== undefined &&
            isRunning(status) &&
            status.tasks.every((t) => t.worker_id === survivor.workerId)
            ? status
            : undefined;
        },
        {
          timeoutMs: 120_000,
          intervalMs: 500,
          description: `the outbox task RUNNING on the surviving worker ${survivor.workerId}`,
        },
      );
      expect(taskWorkers(takenOver)).toEqual([survivor.workerId]);
      // The connector command works while a worker is down: the dead worker first, passed over for the survivor.
      const applied = await applyOutboxConnector(
        { ...pipeline().connector, connectUrl: `${victim.url},${survivor.url}` },
        testLogger,
      );
      expect(isRunning(applied)).toBe(true);

      // Streaming again: events committed after the kill reach Kafka through the survivor.
      const afterKill = async () => (await outboxIds(pipeline().adminUrl)).filter((id) => !beforeKill.has(id));
      await waitFor(
        async () => {
          const seen = new Set(collector.records.map((r) => r.headers.ce_id));
          return (await afterKill()).filter((id) => seen.has(id)).length >= 20;
        },
        { timeoutMs: 120_000, intervalMs: 500, description: 'events written after the kill to be on Kafka' },
      );

      const held = await load.stop();
      loadStopped = true;
      // Reconciliation, outbox against Kafka: every row published, a duplicate only ever the same event again.
      const ids = await outboxIds(pipeline().adminUrl);
      expect(ids).toHaveLength(held);
      await waitFor(
        () => {
          const seen = new Set(collector.records.map((r) => r.headers.ce_id));
          return ids.every((id) => seen.has(id));
        },
        { timeoutMs: 120_000, intervalMs: 500, description: `all ${ids.length} outbox rows on Kafka` },
      );
      const variants = new Map<string, Set<string>>();
      for (const record of collector.records) {
        const id = record.headers.ce_id ?? '';
        variants.set(
          id,
          (variants.get(id) ?? new Set<string>()).add(`${record.key}|${record.value.toString('base64')}`),
        );
      }
      expect([...variants.keys()].sort()).toEqual([...ids].sort());
      expect([...variants.values()].every((v) => v.size === 1)).toBe(true);

      // The killed worker comes back: the group has both members again and the connector still runs.
      await victim.restart();
      await waitFor(
        async () => {
          const group = await groupMembers(connect().groupId);
          return group.members === 2 && group.state === 'Stable';
        },
        {
          timeoutMs: 120_000,
          intervalMs: 500,
          description: `the group ${connect().groupId} to have both workers again`,
        },
      );
      const rejoined = await waitFor(
        async () => {
          const status = await connectorStatus(localConnectApi(victim.url), name);
          return isRunning(status) ? status : undefined;
        },
        {
          timeoutMs: 120_000,
          intervalMs: 500,
          description: 'the connector RUNNING, asked through the worker that came back',
        },
      );
      expect(connect().workers.map((w) => w.workerId)).toContain(taskWorkers(rejoined)[0]);

      expect(await sharedConnect()).toEqual({ pid: sharedBefore.pid, healthy: true });
      console.info(
        `connect cluster drill: task moved ${victim.workerId} → ${survivor.workerId}; ${collector.records.length} records for ${ids.length} events ` +
          `(${collector.records.length - ids.length} duplicates); after the rejoin the task runs on ${taskWorkers(rejoined).join(', ')}`,
      );
    } finally {
      if (!loadStopped) await load.stop().catch(() => undefined);
      await collector.stop();
    }
  }, 420_000);
});

async function outboxIds(adminUrl: string): Promise<string[]> {
  return (await adminQuery(adminUrl, 'select id from outbox')).rows.map((r) => r.id as string);
}

function taskWorkers(status: ConnectorStatus): string[] {
  return status.tasks.map((t) => t.worker_id ?? '?');
}
