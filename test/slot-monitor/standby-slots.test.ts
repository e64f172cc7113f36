/**
 * The slot monitor with a standby (SLOT_MONITOR_STANDBY_URLS, Postgres 17): it alerts when a
 * required slot is not synchronized to the standby, clears once the failover slot's copy is
 * sync-ready, and after the primary is killed and the standby promoted it watches the new
 * primary by itself. A primary + standby of this file's own (the launcher's components).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { ensureMonitorRole } from '../../monitors/slot-monitor/monitor-role.js';
import { nodeLabel } from '../../monitors/slot-monitor/standby-slots.js';
import { adminUrl } from '../../stack/postgres-standby.js';
import { startSynchronizedPair, type SynchronizedPair } from '../failover/support/synchronized-pair.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { adminQuery, uniqueName } from '../support/stack.js';
import { MONITOR_ROLE } from './support/slot-cluster.js';
import { NO_ALERTMANAGER, startMonitorInProcess } from './support/monitor-under-test.js';

installLeakGuard();

/** One sample of a metric from the monitor's /metrics, matched by name and a label fragment. */
async function sample(url: string, name: string, ...labels: string[]): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && labels.every((label) => l.includes(label)));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('slot monitor with a standby: synchronized failover slots, and following the primary', () => {
  const database = uniqueName('standbymon').toLowerCase();
  const failoverSlot = `${database}_failover`;
  const plainSlot = `${database}_plain`;
  let pair: SynchronizedPair;
  let monitor: Awaited<ReturnType<typeof startMonitorInProcess>>;
  let url: string;
  const onPrimary = (sql: string, params: unknown[] = []) =>
    adminQuery(adminUrl(pair.primaryPort, database), sql, params);
  const monitorUrl = (port: number) =>
    `postgres://${MONITOR_ROLE.role}:${MONITOR_ROLE.password}@127.0.0.1:${port}/${database}`;

  beforeAll(async () => {
    pair = await startSynchronizedPair('standbymon');
    await adminQuery(adminUrl(pair.primaryPort), /* sql */ `create database ${pg.escapeIdentifier(database)}`);
    const client = new pg.Client({ connectionString: adminUrl(pair.primaryPort, database) });
    await client.connect();
    try {
      await ensureMonitorRole(client, MONITOR_ROLE);
    } finally {
      await client.end();
    }
    await onPrimary(/* sql */ `create table writes (id serial primary key, at timestamptz default now())`);
    await onPrimary(/* sql */ `select pg_create_logical_replication_slot($1, 'test_decoding', false, false, true)`, [
      failoverSlot,
    ]);
    await onPrimary(/* sql */ `select pg_create_logical_replication_slot($1, 'test_decoding', false, false, false)`, [
      plainSlot,
    ]);
    monitor = await startMonitorInProcess({
      SLOT_MONITOR_DATABASE_URL: monitorUrl(pair.primaryPort),
      SLOT_MONITOR_STANDBY_URLS: monitorUrl(pair.standbyPort),
      SLOT_MONITOR_SLOTS: `${failoverSlot},${plainSlot}`,
      SLOT_MONITOR_POLL_INTERVAL_MS: '200',
      SLOT_MONITOR_INACTIVE_ALERT_AFTER_MS: '3600000',
      SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE: '4GB',
      SLOT_MONITOR_ALERTMANAGER_URL: NO_ALERTMANAGER,
    });
    url = monitor.http.url;
  }, 180_000);

  afterAll(async () => {
    await monitor?.close();
    await pair?.remove();
  });

  it('alerts StandbySlotNotSynchronized for a slot that is not a failover slot', async () => {
    await waitFor(
      async () => (await sample(url, 'slot_monitor_standby_slot_synced', `slot_name="${plainSlot}"`)) === 0,
      { timeoutMs: 30_000, description: 'the plain slot reported not synchronized' },
    );
    await waitFor(
      async () =>
        (await sample(
          url,
          'slot_monitor_alerts_firing',
          'alertname="StandbySlotNotSynchronized"',
          `slot_name="${plainSlot}"`,
        )) === 1,
      {
        timeoutMs: 30_000,
        description: 'StandbySlotNotSynchronized firing for the plain slot',
      },
    );
  });

  it('reports the failover slot synchronized once its copy on the standby is sync-ready', async () => {
    // The copy becomes sync-ready once the primary's slot moves past the standby's position.
    await waitFor(
      async () => {
        await onPrimary(/* sql */ `insert into writes default values`);
        await onPrimary(/* sql */ `select pg_log_standby_snapshot()`);
        await onPrimary(/* sql */ `select pg_replication_slot_advance($1, pg_current_wal_lsn())`, [failoverSlot]);
        return (await sample(url, 'slot_monitor_standby_slot_synced', `slot_name="${failoverSlot}"`)) === 1;
      },
      { timeoutMs: 120_000, intervalMs: 1000, description: 'the failover slot reported synchronized' },
    );
    expect(
      await sample(
        url,
        'slot_monitor_alerts_firing',
        'alertname="StandbySlotNotSynchronized"',
        `slot_name="${failoverSlot}"`,
      ),
    ).not.toBe(1);
    expect(await sample(url, 'slot_monitor_primary_node', `node="${nodeLabel(monitorUrl(pair.primaryPort))}"`)).toBe(1);
  });

  it('after kill -9 of the primary and a promotion, watches the promoted standby, where the failover slot is', async () => {
    await pair.killPrimary();
    await adminQuery(adminUrl(pair.standbyPort), /* sql */ `select pg_promote(true, 60)`);
    await waitFor(
      async () =>
        (await sample(url, 'slot_monitor_primary_node', `node="${nodeLabel(monitorUrl(pair.standbyPort))}"`)) === 1,
      {
        timeoutMs: 30_000,
        description: 'the monitor to watch the promoted standby as the primary',
      },
    );
    await waitFor(async () => (await sample(url, 'slot_monitor_database_up')) === 1, {
      timeoutMs: 30_000,
      description: 'the monitor to read the new primary',
    });
    expect(await sample(url, 'slot_monitor_slot_present', `slot_name="${failoverSlot}"`)).toBe(1);
    expect(
      await sample(url, 'slot_monitor_alerts_firing', 'alertname="SlotMissing"', `slot_name="${failoverSlot}"`),
    ).not.toBe(1);
  });
});
