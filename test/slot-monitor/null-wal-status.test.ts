/**
 * A physical slot created without immediately_reserve reserves no WAL: pg_replication_slots shows
 * wal_status NULL and, once the server has written more WAL than the cap, a negative
 * safe_wal_size (Postgres counts it from LSN 0). Such a slot is at no risk, so the monitor
 * raises no headroom alert for it and exports no headroom gauge, while a slot beside it that does
 * reserve WAL (the positive control, same cap, same traffic) raises SlotHeadroomCritical when it
 * passes the cap.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { uniqueName } from '../support/stack.js';
import { NO_ALERTMANAGER, okPolls, startMonitorInProcess } from './support/monitor-under-test.js';
import { monitorRoleUrl, setClusterSettings, startSlotCluster, type SlotCluster } from './support/slot-cluster.js';
import { WalTraffic } from './support/wal-traffic.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

installLeakGuard();

describe('slot monitor: a slot that reserves no WAL', () => {
  let cluster: SlotCluster;
  let receiver: WebhookReceiver;
  let traffic: WalTraffic;
  let database: string;
  const slotName = uniqueName('unreserving').toLowerCase();
  const controlName = uniqueName('reserving').toLowerCase();

  beforeAll(async () => {
    cluster = await startSlotCluster();
    database = await cluster.createDatabase('nullwal');
    await setClusterSettings(cluster, { max_slot_wal_keep_size: '8MB' });
    await cluster.admin(/* sql */ `select pg_create_physical_replication_slot($1)`, [slotName], database);
    traffic = await WalTraffic.connect(cluster.urlFor(database));
    receiver = await startWebhookReceiver();
  });

  afterAll(async () => {
    await traffic?.close();
    await cluster
      ?.admin(
        /* sql */ `select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = any($1)`,
        [[slotName, controlName]],
      )
      .catch(() => undefined);
    await cluster
      ?.admin(/* sql */ `drop database if exists ${pg.escapeIdentifier(database)} with (force)`)
      .catch(() => undefined);
    await receiver?.close();
    await cluster?.stop();
  });

  it('raises no headroom alert and exports no safe_wal_size for it; a reserving slot beside it does', async () => {
    // The state that used to raise SlotHeadroomCritical: wal_status NULL with a negative safe_wal_size.
    await waitFor(
      async () => {
        const state = await traffic.slotState(slotName);
        if (state?.walStatus === null && (state.safeWalSize ?? 0) < 0) return true;
        await traffic.step();
        return false;
      },
      {
        timeoutMs: 30_000,
        intervalMs: 10,
        description: `slot ${slotName} to show wal_status NULL and a negative safe_wal_size`,
      },
    );
    await cluster.admin(/* sql */ `select pg_create_physical_replication_slot($1, true)`, [controlName], database);
    const monitor = await startMonitorInProcess({
      SLOT_MONITOR_DATABASE_URL: await monitorRoleUrl(cluster, database),
      SLOT_MONITOR_POLL_INTERVAL_MS: '200',
      SLOT_MONITOR_SLOTS: `${slotName},${controlName}`,
      SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE: '8MB',
      SLOT_MONITOR_ALERTMANAGER_URL: NO_ALERTMANAGER,
      SLOT_MONITOR_WEBHOOK_URL: receiver.genericUrl,
    });
    const metrics = async () => (await fetch(`${monitor.http.url}/metrics`)).text();
    await waitFor(async () => (await okPolls(monitor.http.url)) >= 3, {
      timeoutMs: 15_000,
      description: 'three polls of the slot',
    });
    await traffic.stepUntil(controlName, 'unreserved', 64);
    await waitFor(
      () =>
        receiver.generic.some(
          (call) => call.body.labels.slot_name === controlName && call.body.alertname === 'SlotHeadroomCritical',
        ),
      { timeoutMs: 15_000, description: `SlotHeadroomCritical for the control slot ${controlName}` },
    );
    const body = await metrics();
    await monitor.close();
    const slotAlerts = receiver.generic
      .filter((call) => call.body.labels.slot_name === slotName)
      .map((call) => call.body.alertname);
    expect(slotAlerts).toEqual([]);
    expect(body).toMatch(new RegExp(`^slot_monitor_slot_present\\{slot_name="${slotName}"[^}]*\\} 1$`, 'm'));
    expect(body).not.toContain(`slot_monitor_slot_safe_wal_size_bytes{slot_name="${slotName}"`);
  });
});
