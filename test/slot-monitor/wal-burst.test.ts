/**
 * Fault drill: a WAL burst larger than the cap allows between two confirmations of an active slot.
 * A real Debezium connector holds the slot on the slot-test cluster (1 MB WAL segments) with a small
 * max_slot_wal_keep_size; a table outside the publication takes a steady burst of WAL, so the slot,
 * active and healthy, has nothing to confirm. SlotCapTooSmallForWalRate must come before the slot
 * goes unreserved and lost, and resolve once the cap is raised.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { createOutboxConnector, deleteConnector, waitForSlotActive } from './support/debezium-connector.js';
import { NO_ALERTMANAGER, okPolls, startMonitorInProcess } from './support/monitor-under-test.js';
import { monitorRoleUrl, setClusterSettings, startSlotCluster, type SlotCluster } from './support/slot-cluster.js';
import { WalTraffic } from './support/wal-traffic.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const CAP = '32MB';
/** WAL written between two polls of the monitor: a steady rate, far below the cap per poll. */
const SEGMENTS_PER_POLL = 2;

const { connectUrl } = requireStack();
installLeakGuard();

describe('fault drill: a WAL burst larger than the cap allows between confirmations', () => {
  let cluster: SlotCluster;
  let receiver: WebhookReceiver;
  let traffic: WalTraffic;
  let database: string;
  const slotName = uniqueName('burst').toLowerCase();
  const connector = uniqueName('burst-conn');

  beforeAll(async () => {
    cluster = await startSlotCluster();
    database = await cluster.createDatabase('walburst');
    await cluster.admin(
      /* sql */ `create table outbox (id bigserial primary key, created_at timestamptz not null default now(), payload text)`,
      [],
      database,
    );
    await cluster.admin(
      /* sql */ `create publication ${pg.escapeIdentifier(`${slotName}_pub`)} for table outbox`,
      [],
      database,
    );
    // Checkpoints only when the test asks: the slot goes unreserved first, then lost at the checkpoint.
    await setClusterSettings(cluster, { max_slot_wal_keep_size: CAP, max_wal_size: '1GB', checkpoint_timeout: '1h' });
    traffic = await WalTraffic.connect(cluster.urlFor(database));
    receiver = await startWebhookReceiver();
    await createOutboxConnector({
      connectUrl,
      name: connector,
      cluster,
      database,
      slotName,
      publicationName: `${slotName}_pub`,
      topicPrefix: connector.replace(/_/g, '-'),
    });
    await waitForSlotActive(cluster, slotName, true);
  });

  afterAll(async () => {
    await deleteConnector(connectUrl, connector).catch(() => undefined);
    await traffic?.close();
    await cluster
      ?.admin(
        /* sql */ `select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1 and not active`,
        [slotName],
      )
      .catch(() => undefined);
    await cluster
      ?.admin(/* sql */ `drop database if exists ${pg.escapeIdentifier(database)} with (force)`)
      .catch(() => undefined);
    await receiver?.close();
    await cluster?.stop();
  });

  it('warns SlotCapTooSmallForWalRate before the active slot goes unreserved and lost, and resolves when the cap is raised', async () => {
    const monitor = await startMonitorInProcess({
      SLOT_MONITOR_DATABASE_URL: await monitorRoleUrl(cluster, database),
      SLOT_MONITOR_POLL_INTERVAL_MS: '250',
      SLOT_MONITOR_SLOTS: slotName,
      // The test sets the cap and later raises it, as an operator would in check-only mode.
      SLOT_MONITOR_KEEP_SIZE_MODE: 'check',
      SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE: CAP,
      SLOT_MONITOR_OFFSET_FLUSH_INTERVAL_MS: '5000',
      SLOT_MONITOR_HEARTBEAT_INTERVAL_MS: '10000',
      SLOT_MONITOR_WAL_BURST_MARGIN: '2',
      SLOT_MONITOR_ALERTMANAGER_URL: NO_ALERTMANAGER,
      SLOT_MONITOR_WEBHOOK_URL: receiver.genericUrl,
    });
    const polls = () => okPolls(monitor.http.url);
    const starts = (name: string) =>
      receiver.generic.findIndex((call) => call.body.alertname === name && call.body.status === 'firing');
    const burstStartedAt = Date.now();
    try {
      // The burst: a few segments between two polls, again and again, until the slot is past the cap.
      await waitFor(
        async () => {
          const before = await polls();
          for (let i = 0; i < SEGMENTS_PER_POLL; i += 1) await traffic.step();
          await waitFor(async () => (await polls()) > before, {
            timeoutMs: 10_000,
            intervalMs: 20,
            description: 'the monitor to poll once more',
          });
          return (await traffic.slotState(slotName))?.walStatus === 'unreserved';
        },
        { timeoutMs: 90_000, intervalMs: 0, description: `slot ${slotName} to go unreserved under the burst` },
      );
      expect((await traffic.slotState(slotName))?.active, 'the slot was read all along').toBe(true);
      await traffic.checkpoint();
      await waitFor(() => starts('SlotLost') >= 0, {
        timeoutMs: 20_000,
        description: 'SlotLost at the webhook after the checkpoint',
      });

      const warning = receiver.generic[starts('SlotCapTooSmallForWalRate')];
      expect(starts('SlotCapTooSmallForWalRate')).toBeGreaterThanOrEqual(0);
      expect(starts('SlotCapTooSmallForWalRate')).toBeLessThan(starts('SlotWalUnreserved'));
      expect(starts('SlotWalUnreserved')).toBeLessThan(starts('SlotLost'));
      expect(warning?.body.summary).toContain('raise SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE to at least');
      expect(warning?.body.labels.severity).toBe('warning');

      await setClusterSettings(cluster, { max_slot_wal_keep_size: '4GB' });
      const raisedAt = Date.now();
      const resolved = await waitFor(
        () =>
          receiver.generic.find(
            (call) => call.body.alertname === 'SlotCapTooSmallForWalRate' && call.body.status === 'resolved',
          ),
        {
          timeoutMs: 20_000,
          description: 'SlotCapTooSmallForWalRate to resolve once the cap is raised',
        },
      );
      const after = (name: string) => (receiver.generic[starts(name)]?.receivedAt ?? NaN) - burstStartedAt;
      console.log('WAL burst drill (ms after the burst started; not asserted):', {
        SlotCapTooSmallForWalRate: after('SlotCapTooSmallForWalRate'),
        SlotWalUnreserved: after('SlotWalUnreserved'),
        SlotLost: after('SlotLost'),
        'resolved after the cap was raised': resolved.receivedAt - raisedAt,
        summary: warning?.body.summary,
      });
    } finally {
      await monitor.close();
    }
  });
});
