/**
 * The monitor as its own process: metrics over HTTP, an alert when the database goes away, and
 * a Watchdog that stops renewing at Alertmanager when the process is killed with -9. Each test
 * runs a monitor of its own on a database of its own, so its alerts are its own.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { uniqueName } from '../support/stack.js';
import { startAlertmanager, type AlertmanagerProcess } from './support/alertmanager-process.js';
import { startMonitorProcess, type MonitorProcess } from './support/monitor-under-test.js';
import { monitorRoleUrl, startSlotCluster, type SlotCluster } from './support/slot-cluster.js';
import { received, startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const POLL_INTERVAL_MS = 500;
const RESEND_MS = 500;

installLeakGuard();

describe('slot monitor process: metrics, unreachable database, Watchdog', () => {
  let cluster: SlotCluster;
  let receiver: WebhookReceiver;
  let alertmanager: AlertmanagerProcess;
  const databases: string[] = [];
  const timings: Record<string, number> = {};

  /** A database with an idle logical slot, and a monitor process watching it through the real Alertmanager. */
  async function monitorOfItsOwn(): Promise<{ monitor: MonitorProcess; database: string; slotName: string }> {
    const database = await cluster.createDatabase('slotproc');
    databases.push(database);
    const slotName = uniqueName('idle_slot').toLowerCase();
    await cluster.admin(/* sql */ `select pg_create_logical_replication_slot($1, 'pgoutput')`, [slotName], database);
    const monitor = await startMonitorProcess({
      SLOT_MONITOR_DATABASE_URL: await monitorRoleUrl(cluster, database),
      SLOT_MONITOR_POLL_INTERVAL_MS: String(POLL_INTERVAL_MS),
      SLOT_MONITOR_SLOTS: slotName,
      SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE: '64MB',
      SLOT_MONITOR_ALERTMANAGER_URL: alertmanager.url,
      SLOT_MONITOR_ALERTMANAGER_RESEND_MS: String(RESEND_MS),
    });
    return { monitor, database, slotName };
  }

  const ofDatabase = (database: string) => (alert: { labels: Record<string, string> }) =>
    alert.labels.database?.endsWith(`/${database}`) === true;

  beforeAll(async () => {
    cluster = await startSlotCluster();
    receiver = await startWebhookReceiver();
    alertmanager = await startAlertmanager(receiver);
  });

  afterAll(async () => {
    await cluster?.start();
    for (const database of databases) {
      await cluster
        ?.admin(
          /* sql */ `select pg_drop_replication_slot(slot_name) from pg_replication_slots where database = $1 and not active`,
          [database],
        )
        .catch(() => undefined);
      await cluster
        ?.admin(/* sql */ `drop database if exists ${pg.escapeIdentifier(database)} with (force)`)
        .catch(() => undefined);
    }
    await alertmanager?.close();
    await receiver?.close();
    await cluster?.stop();
    console.log('slot monitor process timings (ms, not asserted):', timings);
  });

  it('serves the slot gauges on /metrics and is ready once it has polled', async () => {
    const { monitor, slotName } = await monitorOfItsOwn();
    try {
      const body = await waitFor(
        async () => {
          const text = await (await fetch(`${monitor.metricsUrl}/metrics`)).text();
          const gauges = ['slot_monitor_slot_retained_wal_bytes', 'slot_monitor_slot_safe_wal_size_bytes'];
          return gauges.every((name) => text.includes(`${name}{slot_name="${slotName}"`)) && text;
        },
        { timeoutMs: 15_000, description: 'slot gauges on /metrics' },
      );
      const gauge = (name: string, labels = `slot_name="${slotName}"`) =>
        new RegExp(`^${name}\\{${labels}[^}]*\\} (\\S+)$`, 'm').exec(body)?.[1];
      expect(gauge('slot_monitor_slot_active')).toBe('0');
      expect(gauge('slot_monitor_slot_present')).toBe('1');
      expect(gauge('slot_monitor_slot_wal_status', `slot_name="${slotName}",wal_status="reserved"`)).toBe('1');
      expect(Number(gauge('slot_monitor_slot_safe_wal_size_bytes'))).toBeGreaterThan(0);
      expect(Number(gauge('slot_monitor_slot_confirmed_flush_lag_bytes'))).toBeGreaterThanOrEqual(0);
      expect(Number(gauge('slot_monitor_slot_inactive_seconds'))).toBeGreaterThanOrEqual(0);
      expect(body).toMatch(/^slot_monitor_max_slot_wal_keep_size_bytes\{[^}]*\} 67108864$/m);
      expect(body).toMatch(/^slot_monitor_database_up\{[^}]*\} 1$/m);
      expect(Number(/^slot_monitor_wal_position_bytes\{[^}]*\} (\d+)$/m.exec(body)?.[1])).toBeGreaterThan(0);
      expect((await fetch(`${monitor.metricsUrl}/readyz`)).status).toBe(200);
    } finally {
      await monitor.close();
    }
  });

  it('raises SlotMonitorDatabaseUnreachable when the database goes away, and resolves it when it is back', async () => {
    const { monitor, database } = await monitorOfItsOwn();
    const mine = ofDatabase(database);
    try {
      await waitFor(() => received(receiver, 'Watchdog', 'firing').some(mine), {
        timeoutMs: 10_000,
        description: "the Watchdog at the dead man's switch",
      });
      await cluster.stop();
      const stoppedAt = Date.now();
      const alert = await waitFor(() => received(receiver, 'SlotMonitorDatabaseUnreachable', 'firing').find(mine), {
        timeoutMs: 15_000,
        intervalMs: 50,
        description: 'SlotMonitorDatabaseUnreachable at the webhook',
      });
      timings['database stopped → unreachable alert'] = alert.receivedAt - stoppedAt;
      expect(alert.labels.severity).toBe('critical');
      expect(alert.annotations.summary).toContain('cannot see the replication slots');
      expect((await fetch(`${monitor.metricsUrl}/readyz`)).status).toBe(503);
      await cluster.start();
      await waitFor(() => received(receiver, 'SlotMonitorDatabaseUnreachable', 'resolved').find(mine), {
        timeoutMs: 15_000,
        intervalMs: 50,
        description: 'SlotMonitorDatabaseUnreachable to resolve',
      });
    } finally {
      await cluster.start();
      await monitor.close();
    }
  });

  it('stops renewing its Watchdog at Alertmanager when the process is killed with -9', async () => {
    const { monitor, database } = await monitorOfItsOwn();
    const watchdogActive = async () =>
      (await alertmanager.activeAlerts()).some((a) => a.labels.alertname === 'Watchdog' && ofDatabase(database)(a));
    await waitFor(watchdogActive, { timeoutMs: 15_000, description: "the monitor's Watchdog active at Alertmanager" });
    monitor.child.kill('SIGKILL');
    await monitor.exited;
    const killedAt = Date.now();
    await monitor.close();
    // Nothing renews it: Alertmanager lets it expire at its endsAt (4 × max(resend, poll) after the last send).
    await waitFor(async () => !(await watchdogActive()), {
      timeoutMs: 30_000,
      intervalMs: 100,
      description: 'the Watchdog to expire at Alertmanager after kill -9',
    });
    timings['kill -9 → Watchdog no longer active at Alertmanager'] = Date.now() - killedAt;
  });
});
