/**
 * max_slot_wal_keep_size left at -1 (unlimited): enforce mode sets the target as the
 * non-superuser monitor role and says so; check-only mode alerts and changes nothing; an
 * invalid target stops the program at start with a sentence naming the setting; on a fresh stack
 * (a cluster made by the launcher with its defaults) the default target is already in place.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { uniqueName } from '../support/stack.js';
import { startAlertmanager, type AlertmanagerProcess } from './support/alertmanager-process.js';
import { NO_ALERTMANAGER, okPolls, runMonitorCli, startMonitorInProcess } from './support/monitor-under-test.js';
import { projectRoot, stackSettings } from '../../stack/config.js';
import {
  MONITOR_ROLE,
  monitorRoleUrl,
  setClusterSettings,
  startFreshStackCluster,
  startSlotCluster,
  type SlotCluster,
} from './support/slot-cluster.js';
import { received, startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

installLeakGuard();

describe('slot monitor: max_slot_wal_keep_size', () => {
  let cluster: SlotCluster;
  let receiver: WebhookReceiver;
  let alertmanager: AlertmanagerProcess;
  const databases: string[] = [];

  const keepSize = async () =>
    ((await cluster.admin(/* sql */ `show max_slot_wal_keep_size`)).rows[0] as { max_slot_wal_keep_size: string })
      .max_slot_wal_keep_size;
  /** Each test watches a database of its own, so the alerts (labelled with it) are its own. */
  const ownDatabase = async () => {
    const database = await cluster.createDatabase('keepsize');
    databases.push(database);
    return {
      url: await monitorRoleUrl(cluster, database),
      mine: (alert: { labels: Record<string, string> }) => alert.labels.database?.endsWith(`/${database}`) === true,
    };
  };
  const monitorEnv = (mode: 'enforce' | 'check', monitorUrl: string) => ({
    SLOT_MONITOR_DATABASE_URL: monitorUrl,
    SLOT_MONITOR_POLL_INTERVAL_MS: '500',
    SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE: '64MB',
    SLOT_MONITOR_KEEP_SIZE_MODE: mode,
    SLOT_MONITOR_ALERTMANAGER_URL: alertmanager.url,
    SLOT_MONITOR_WEBHOOK_URL: receiver.genericUrl,
  });

  beforeAll(async () => {
    cluster = await startSlotCluster();
    receiver = await startWebhookReceiver();
    alertmanager = await startAlertmanager(receiver);
  });

  afterAll(async () => {
    for (const database of databases)
      await cluster
        ?.admin(/* sql */ `drop database if exists ${pg.escapeIdentifier(database)} with (force)`)
        .catch(() => undefined);
    await alertmanager?.close();
    await receiver?.close();
    await cluster?.stop();
  });

  it('runs as a role that is not superuser', async () => {
    await ownDatabase();
    const { rows } = await cluster.admin(/* sql */ `select rolsuper, rolreplication from pg_roles where rolname = $1`, [
      MONITOR_ROLE.role,
    ]);
    expect(rows).toEqual([{ rolsuper: false, rolreplication: false }]);
  });

  it('enforce mode: sets -1 to the target with ALTER SYSTEM and raises an info alert saying what changed', async () => {
    const { url, mine } = await ownDatabase();
    await setClusterSettings(cluster, { max_slot_wal_keep_size: '-1' });
    expect(await keepSize()).toBe('-1');
    const monitor = await startMonitorInProcess(monitorEnv('enforce', url));
    const notice = await waitFor(() => received(receiver, 'SlotKeepSizeCorrected', 'firing').find(mine), {
      timeoutMs: 10_000,
      intervalMs: 50,
      description: 'SlotKeepSizeCorrected at the Alertmanager webhook',
    });
    expect(notice.labels.severity).toBe('info');
    expect(notice.annotations.summary).toBe(
      'The slot monitor changed max_slot_wal_keep_size from -1 (unlimited) to 64 MB on the seat database.',
    );
    expect(await keepSize()).toBe('64MB');
    expect(receiver.generic.filter((c) => mine(c.body)).map((c) => c.body.alertname)).toContain(
      'SlotKeepSizeCorrected',
    );
    expect(received(receiver, 'SlotKeepSizeMismatch', 'firing').filter(mine)).toEqual([]);
    await monitor.close();
  });

  it('check-only mode: alerts on -1 and leaves the setting alone', async () => {
    const { url, mine } = await ownDatabase();
    await setClusterSettings(cluster, { max_slot_wal_keep_size: '-1' });
    const monitor = await startMonitorInProcess(monitorEnv('check', url));
    const warning = await waitFor(() => received(receiver, 'SlotKeepSizeMismatch', 'firing').find(mine), {
      timeoutMs: 10_000,
      intervalMs: 50,
      description: 'SlotKeepSizeMismatch at the Alertmanager webhook',
    });
    expect(warning.labels.severity).toBe('warning');
    expect(warning.annotations.summary).toContain(
      'max_slot_wal_keep_size is -1 (unlimited) on the seat database, not the required 64 MB',
    );
    const seen = await okPolls(monitor.http.url);
    await waitFor(async () => (await okPolls(monitor.http.url)) >= seen + 2, {
      timeoutMs: 10_000,
      description: 'two more polls',
    });
    expect(await keepSize()).toBe('-1');
    expect(received(receiver, 'SlotKeepSizeMismatch', 'firing').filter(mine)).toHaveLength(1);
    await monitor.close();
  });

  it("a fresh stack: the monitor's default target is the cap the stack writes, so enforce mode changes nothing", async () => {
    const shared = /^max_slot_wal_keep_size = '([^']+)'$/m.exec(
      readFileSync(join(projectRoot, 'stack', 'postgres.conf'), 'utf8'),
    )?.[1];
    expect(shared, 'stack/postgres.conf (docker compose) writes the same cap as the native stack').toBe(
      stackSettings.settings.postgresMaxSlotWalKeepSize.default,
    );
    const fresh = await startFreshStackCluster();
    try {
      const before = (
        (await fresh.admin(/* sql */ `show max_slot_wal_keep_size`)).rows[0] as { max_slot_wal_keep_size: string }
      ).max_slot_wal_keep_size;
      expect(before).toBe(stackSettings.settings.postgresMaxSlotWalKeepSize.default);
      const monitor = await startMonitorInProcess({
        SLOT_MONITOR_DATABASE_URL: await monitorRoleUrl(fresh, 'postgres'),
        SLOT_MONITOR_POLL_INTERVAL_MS: '200',
        SLOT_MONITOR_ALERTMANAGER_URL: NO_ALERTMANAGER,
      });
      await waitFor(async () => (await okPolls(monitor.http.url)) >= 3, {
        timeoutMs: 15_000,
        description: 'three polls of the fresh stack',
      });
      const metrics = await (await fetch(`${monitor.http.url}/metrics`)).text();
      const current = async () =>
        ((await fresh.admin(/* sql */ `show max_slot_wal_keep_size`)).rows[0] as { max_slot_wal_keep_size: string })
          .max_slot_wal_keep_size;
      expect(metrics).toMatch(/^slot_monitor_keep_size_corrections_total\{[^}]*\} 0$/m);
      expect(metrics).not.toContain('alertname="SlotKeepSizeMismatch"');
      expect(await current()).toBe(before);
      // The positive control: the same monitor on the same cluster does correct a cap that differs.
      await fresh.admin(/* sql */ `alter system set max_slot_wal_keep_size = '-1'`);
      await fresh.admin(/* sql */ `select pg_reload_conf()`);
      await waitFor(
        async () =>
          /^slot_monitor_keep_size_corrections_total\{[^}]*\} 1$/m.test(
            await (await fetch(`${monitor.http.url}/metrics`)).text(),
          ),
        { timeoutMs: 15_000, description: 'the monitor to correct -1 back to the target' },
      );
      await monitor.close();
      expect(await current()).toBe(before);
    } finally {
      await fresh.remove();
    }
  });

  it('refuses an invalid target at start with one sentence naming the setting', async () => {
    const run = await runMonitorCli([], {
      SLOT_MONITOR_DATABASE_URL: `postgres://x:y@127.0.0.1:1/${uniqueName('db')}`,
      SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE: '-1',
    });
    expect(run.code).toBe(2);
    expect(run.output).toContain(
      'SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE=-1 would let a dead slot fill the disk; set a cap such as 10GB.',
    );
  });
});
