/**
 * The monitor as its own process: metrics over HTTP, an alert when the database goes away, and
 * a Watchdog that stops renewing at Alertmanager when the process is killed with -9.
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
/** What the monitor gives an alert before it expires unless renewed: 4 × max(resend, poll). */
const ALERT_TTL_MS = 4 * Math.max(POLL_INTERVAL_MS, RESEND_MS);

installLeakGuard();

describe('slot monitor process: metrics, unreachable database, Watchdog', () => {
  let cluster: SlotCluster;
  let receiver: WebhookReceiver;
  let alertmanager: AlertmanagerProcess;
  let monitor: MonitorProcess;
  let database: string;
  const slotName = uniqueName('idle_slot').toLowerCase();
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    cluster = await startSlotCluster();
    database = await cluster.createDatabase('slotproc');
    await cluster.admin(/* sql */ `select pg_create_logical_replication_slot($1, 'pgoutput')`, [slotName], database);
    const monitorUrl = await monitorRoleUrl(cluster, database);
    receiver = await startWebhookReceiver();
    alertmanager = await startAlertmanager(receiver.alertmanagerUrl);
    monitor = await startMonitorProcess({
      SLOT_MONITOR_DATABASE_URL: monitorUrl,
      SLOT_MONITOR_POLL_INTERVAL_MS: String(POLL_INTERVAL_MS),
      SLOT_MONITOR_SLOTS: slotName,
      SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE: '64MB',
      SLOT_MONITOR_ALERTMANAGER_URL: alertmanager.url,
      SLOT_MONITOR_ALERTMANAGER_RESEND_MS: String(RESEND_MS),
    });
  });

  afterAll(async () => {
    await monitor?.close();
    await cluster?.start();
    await cluster?.admin(/* sql */ `select pg_drop_replication_slot($1)`, [slotName]).catch(() => undefined);
    await cluster?.admin(/* sql */ `drop database if exists ${pg.escapeIdentifier(database)} with (force)`).catch(() => undefined);
    await alertmanager?.close();
    await receiver?.close();
    await cluster?.stop();
    console.log('slot monitor process timings (ms):', timings);
  });

  it('serves the slot gauges on /metrics and is ready once it has polled', async () => {
    const body = await waitFor(
      async () => {
        const text = await (await fetch(`${monitor.metricsUrl}/metrics`)).text();
        const gauges = ['slot_monitor_slot_retained_wal_bytes', 'slot_monitor_slot_safe_wal_size_bytes'];
        return gauges.every((name) => text.includes(`${name}{slot_name="${slotName}"`)) && text;
      },
      { timeoutMs: 15_000, description: 'slot gauges on /metrics' },
    );
    const gauge = (name: string, labels = `slot_name="${slotName}"`) => new RegExp(`^${name}\\{${labels}[^}]*\\} (\\S+)$`, 'm').exec(body)?.[1];
    expect(gauge('slot_monitor_slot_active')).toBe('0');
    expect(gauge('slot_monitor_slot_present')).toBe('1');
    expect(gauge('slot_monitor_slot_wal_status', `slot_name="${slotName}",wal_status="reserved"`)).toBe('1');
    expect(Number(gauge('slot_monitor_slot_safe_wal_size_bytes'))).toBeGreaterThan(0);
    expect(Number(gauge('slot_monitor_slot_confirmed_flush_lag_bytes'))).toBeGreaterThanOrEqual(0);
    expect(gauge('slot_monitor_slot_inactive_seconds')).toBeDefined();
    expect(body).toMatch(/^slot_monitor_max_slot_wal_keep_size_bytes\{[^}]*\} 67108864$/m);
    expect(body).toMatch(/^slot_monitor_database_up\{[^}]*\} 1$/m);
    expect((await fetch(`${monitor.metricsUrl}/readyz`)).status).toBe(200);
  });

  it('raises SlotMonitorDatabaseUnreachable when the database goes away, and resolves it when it is back', async () => {
    await waitFor(() => received(receiver, 'Watchdog', 'firing')[0], { timeoutMs: 10_000, description: 'the Watchdog at the webhook' });
    await cluster.stop();
    const stoppedAt = Date.now();
    const alert = await waitFor(() => received(receiver, 'SlotMonitorDatabaseUnreachable', 'firing')[0], {
      timeoutMs: 15_000, intervalMs: 50, description: 'SlotMonitorDatabaseUnreachable at the webhook',
    });
    timings['database stopped → unreachable alert'] = alert.receivedAt - stoppedAt;
    expect(alert.labels.severity).toBe('critical');
    expect(alert.annotations.summary).toContain('cannot see the replication slots');
    expect((await fetch(`${monitor.metricsUrl}/readyz`)).status).toBe(503);
    await cluster.start();
    await waitFor(() => received(receiver, 'SlotMonitorDatabaseUnreachable', 'resolved')[0], {
      timeoutMs: 15_000, intervalMs: 50, description: 'SlotMonitorDatabaseUnreachable to resolve',
    });
  });

  it('stops renewing its Watchdog at Alertmanager when the process is killed with -9', async () => {
    const watchdogActive = async () => (await alertmanager.activeAlerts()).some((a) => a.labels.alertname === 'Watchdog');
    expect(await watchdogActive()).toBe(true);
    monitor.child.kill('SIGKILL');
    await monitor.exited;
    const killedAt = Date.now();
    await monitor.close();
    const resolved = await waitFor(() => received(receiver, 'Watchdog', 'resolved')[0], {
      timeoutMs: ALERT_TTL_MS + 10_000, intervalMs: 50, description: 'the Watchdog to expire at Alertmanager after kill -9',
    });
    timings['kill -9 → Watchdog resolved at webhook'] = resolved.receivedAt - killedAt;
    expect(await watchdogActive()).toBe(false);
    expect(resolved.receivedAt - killedAt).toBeLessThan(ALERT_TTL_MS + 2_000);
  });
});
