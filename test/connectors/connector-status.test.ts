/**
 * Issue 9, item 8: `npm run connector -- status` says a connector is failing when its task is
 * RUNNING but its replication slot is lost (Debezium retries such a slot for about 30 minutes with
 * the task RUNNING), and names the recovery command. The slot is lost for real: a seat database on
 * the 1 MB-segment slot-test cluster, a WAL burst with a tiny max_slot_wal_keep_size while the
 * connector streams; the connector runs on a Connect worker of this test's own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorStatus } from '../../connectors/connect-client.js';
import { LOCAL_CONNECT_ENV, localConnectApi } from '../../stack/config.js';
import { SLOT_RECOVERY_COMMAND } from '../../connectors/connector-health.js';
import { waitFor } from '../../lib/wait.js';
import { runChildProgram } from '../consumers/helpers/child-consumer.js';
import { waitForSlotActive } from '../slot-monitor/support/debezium-connector.js';
import { setClusterSettings, startSlotCluster, type SlotCluster } from '../slot-monitor/support/slot-cluster.js';
import { WalTraffic } from '../slot-monitor/support/wal-traffic.js';
import { startLostSlotPipeline, type LostSlotPipeline } from '../slot-recovery/support/lost-slot-pipeline.js';
import { createArena, sellOrder } from '../slot-recovery/support/seat-sales.js';
import { startConnectWorker, type ConnectWorker } from '../support/connect-worker.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();

describe('connector status looks at the slot, not only at Connect', () => {
  const name = uniqueName('status').toLowerCase();
  let cluster: SlotCluster;
  let worker: ConnectWorker;
  let pipeline: LostSlotPipeline;
  let traffic: WalTraffic;

  const status = () =>
    runChildProgram(
      'connectors/cli.ts',
      {
        CONNECT_URL: worker.url,
        ...LOCAL_CONNECT_ENV,
        CONNECTOR_NAME: name,
        SLOT_NAME: name,
        CONNECTOR_SEAT_DB_URL: pipeline.debeziumUrl,
        CONNECTOR_SLOT_INACTIVE_GRACE_MS: '2000',
        LOG_LEVEL: 'warn',
      },
      ['status'],
    );

  beforeAll(async () => {
    cluster = await startSlotCluster();
    worker = await startConnectWorker('status');
    pipeline = await startLostSlotPipeline(cluster, { ...stack, connectUrl: worker.url }, name);
    await createArena(pipeline.service);
    traffic = await WalTraffic.connect(pipeline.adminUrl);
  });

  afterAll(async () => {
    await traffic?.close();
    await pipeline?.teardown();
    await worker?.stop();
    await cluster?.stop();
  });

  it('a streaming connector is healthy: exit 0, its slot active', async () => {
    await sellOrder(pipeline.service, 0);
    const healthy = await status();
    expect(healthy.code, healthy.output).toBe(0);
    expect(healthy.output).toContain('"state": "wal_status reserved, active"');
  });

  it('a RUNNING task retrying a lost slot is failing: exit 1, with the recovery command', async () => {
    // A WAL burst outside the publication, faster than the connector confirms positions, with a
    // tiny cap: Postgres ends the connector's replication connection and invalidates the slot.
    await waitForSlotActive(cluster, name, true);
    await setClusterSettings(cluster, {
      max_wal_size: '16MB',
      min_wal_size: '2MB',
      max_slot_wal_keep_size: '4MB',
      checkpoint_timeout: '1h',
    });
    await waitFor(
      async () => {
        for (let step = 0; step < 8; step += 1) await traffic.step();
        await traffic.checkpoint();
        return (await traffic.slotState(name))?.walStatus === 'lost';
      },
      { timeoutMs: 60_000, intervalMs: 10, description: `slot ${name} to be lost` },
    );
    const running = await connectorStatus(localConnectApi(worker.url), name);
    expect([running?.connector.state, ...(running?.tasks.map((t) => t.state) ?? [])]).toEqual(['RUNNING', 'RUNNING']);

    const failing = await status();
    expect(failing.code, failing.output).toBe(1);
    expect(failing.output).toContain(`replication slot ${name} is lost`);
    expect(failing.output).toContain(SLOT_RECOVERY_COMMAND);
    expect(failing.output).toContain('"state": "RUNNING"');
  });
});
