/**
 * Where the monitors' alerts go: the Watchdog heartbeat takes its own route to a dead man's switch
 * (checked with amtool on the shipped alertmanager.yml, and through a real Alertmanager), the other
 * alerts go to the people's receiver; every alert links to the monitor's /metrics (generatorURL)
 * and to its runbook section in docs/operations.md (runbook_url).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { DEAD_MANS_SWITCH } from '../../stack/alertmanager.js';
import { projectRoot } from '../../stack/config.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { uniqueName } from '../support/stack.js';
import { startAlertmanager, type AlertmanagerProcess } from './support/alertmanager-process.js';
import { startMonitorInProcess } from './support/monitor-under-test.js';
import { monitorRoleUrl, startSlotCluster, type SlotCluster } from './support/slot-cluster.js';
import { received, startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

installLeakGuard();

const SHIPPED_CONFIG = join(projectRoot, 'monitors', 'alertmanager', 'alertmanager.yml');

function amtool(args: string[]): string {
  const run = spawnSync('amtool', args, { encoding: 'utf8' });
  if (run.error)
    throw new Error(
      `amtool could not run (${run.error.message}); install it with: sudo apt-get install prometheus-alertmanager`,
    );
  expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
  return run.stdout.trim();
}

describe("Alertmanager routing of the monitors' alerts (amtool, shipped configuration)", () => {
  const receiverOf = (...labels: string[]) =>
    amtool(['config', 'routes', 'test', `--config.file=${SHIPPED_CONFIG}`, ...labels]);

  it("sends each monitor's Watchdog to the dead man's switch, every other alert to the webhook receiver", () => {
    expect(amtool(['check-config', SHIPPED_CONFIG])).toContain('SUCCESS');
    expect(receiverOf('alertname=Watchdog', 'severity=none', 'service=slot-monitor')).toBe(DEAD_MANS_SWITCH);
    expect(receiverOf('alertname=Watchdog', 'severity=none', 'service=job-watchdog')).toBe(DEAD_MANS_SWITCH);
    expect(receiverOf('alertname=SlotLost', 'severity=critical', 'service=slot-monitor', 'slot_name=cdc')).toBe(
      'webhook',
    );
    expect(receiverOf('alertname=JobRunOverdue', 'severity=critical', 'service=job-watchdog')).toBe('webhook');
  });

  it('repeats the heartbeat every minute, each label set its own group, and never notifies it resolved', () => {
    const config = JSON.parse(readFileSync(SHIPPED_CONFIG, 'utf8')) as {
      route: {
        repeat_interval: string;
        routes: { receiver: string; group_by: string[]; repeat_interval: string; continue?: boolean }[];
      };
      receivers: { name: string; webhook_configs?: { send_resolved: boolean }[] }[];
    };
    const route = config.route.routes.find((r) => r.receiver === DEAD_MANS_SWITCH);
    expect(route).toMatchObject({ group_by: ['...'], repeat_interval: '1m' });
    expect(route?.continue).toBeUndefined();
    expect(config.route.repeat_interval).toBe('4h');
  });
});

describe('through a real Alertmanager, from a running slot monitor', () => {
  let cluster: SlotCluster;
  let receiver: WebhookReceiver;
  let alertmanager: AlertmanagerProcess;
  let database: string;
  const missingSlot = uniqueName('never_created').toLowerCase();

  beforeAll(async () => {
    cluster = await startSlotCluster();
    database = await cluster.createDatabase('routing');
    receiver = await startWebhookReceiver();
    alertmanager = await startAlertmanager(receiver);
  });

  afterAll(async () => {
    await cluster
      ?.admin(/* sql */ `drop database if exists ${pg.escapeIdentifier(database)} with (force)`)
      .catch(() => undefined);
    await alertmanager?.close();
    await receiver?.close();
    await cluster?.stop();
  });

  it("delivers the Watchdog again and again to the dead man's switch only, a slot alert to the webhook only, each linking to /metrics and its runbook", async () => {
    const monitor = await startMonitorInProcess({
      SLOT_MONITOR_DATABASE_URL: await monitorRoleUrl(cluster, database),
      SLOT_MONITOR_POLL_INTERVAL_MS: '500',
      SLOT_MONITOR_SLOTS: missingSlot,
      SLOT_MONITOR_ALERTMANAGER_URL: alertmanager.url,
      SLOT_MONITOR_ALERTMANAGER_RESEND_MS: '500',
    });
    try {
      await waitFor(() => received(receiver, 'Watchdog', 'firing').length >= 2, {
        timeoutMs: 20_000,
        description: "the Watchdog repeated to the dead man's switch",
      });
      const [missing] = await waitFor(
        () =>
          received(receiver, 'SlotMissing', 'firing', missingSlot).length > 0 &&
          received(receiver, 'SlotMissing', 'firing', missingSlot),
        {
          timeoutMs: 20_000,
          description: 'SlotMissing at the webhook receiver',
        },
      );
      const watchdogs = received(receiver, 'Watchdog', 'firing');
      expect(new Set(watchdogs.map((a) => a.receiver))).toEqual(new Set([DEAD_MANS_SWITCH]));
      expect(missing?.receiver).toBe('webhook');
      for (const alert of [missing, watchdogs[0]]) expect(alert?.generatorURL).toBe(`${monitor.http.url}/metrics`);
      expect(missing?.annotations.runbook_url).toBe('docs/operations.md#slotmissing');
      expect(watchdogs[0]?.annotations.runbook_url).toBe('docs/operations.md#watchdog');
      expect((await fetch(missing?.generatorURL ?? '')).status).toBe(200);
    } finally {
      await monitor.close();
    }
  });
});
