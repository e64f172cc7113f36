/**
 * What the rehearsal reports as the alerts of its run, against a real Alertmanager: an alert that
 * began before the run (the lost slot a minute earlier) is in, marked so; one that ended before
 * the run is out; the Watchdog heartbeat is out; an alert about the rehearsal's own programs that
 * resolves while it starts them ends up in the "left out" list, not in the run's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertWatcher } from '../../rehearsal/alerts.js';
import { startAlertmanager, type AlertmanagerProcess } from '../slot-monitor/support/alertmanager-process.js';

let alertmanager: AlertmanagerProcess | undefined;
const am = (): AlertmanagerProcess => {
  if (alertmanager === undefined) throw new Error('Alertmanager did not start (see beforeAll)');
  return alertmanager;
};

beforeAll(async () => {
  // Notifications go nowhere: this test reads Alertmanager's API only.
  alertmanager = await startAlertmanager({
    alertmanagerUrl: 'http://127.0.0.1:9/alerts',
    deadMansSwitchUrl: 'http://127.0.0.1:9/heartbeat',
  });
}, 30_000);
afterAll(async () => alertmanager?.close());

async function post(alertname: string, startsAt: number, endsAt?: number): Promise<void> {
  const alert = {
    labels: { alertname, severity: alertname === 'Watchdog' ? 'none' : 'critical', instance: 'rehearsal-test' },
    startsAt: new Date(startsAt).toISOString(),
    ...(endsAt === undefined ? {} : { endsAt: new Date(endsAt).toISOString() }),
  };
  const response = await fetch(`${am().url}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([alert]),
  });
  if (!response.ok) throw new Error(`posting ${alertname}: HTTP ${response.status} ${await response.text()}`);
}

describe('the alerts of a rehearsal run', () => {
  it("lists those active during the run, those that began before it included; leaves out the Watchdog, those over before it, and its own programs' resolved at start", async () => {
    const now = Date.now();
    await post('SlotLost', now - 60_000);
    await post('Watchdog', now - 60_000);
    await post('SlotInactive', now - 120_000, now - 30_000);
    await post('ConsumerDown', now - 90_000);

    const watcher = new AlertWatcher(am().url);
    await watcher.poll();
    expect(watcher.firing()).toEqual(['ConsumerDown', 'SlotLost']);
    // The rehearsal has started its consumer: Prometheus resolves the alert.
    setTimeout(() => void post('ConsumerDown', now - 90_000, Date.now()), 1500);
    expect(await watcher.waitForOwnProgramsSeen(20_000)).toEqual([]);

    const runStart = Date.now();
    await post('JobRunOverdue', runStart + 1);
    await watcher.poll();
    expect(watcher.firing()).toEqual(['JobRunOverdue', 'SlotLost']);
    await post('JobRunOverdue', runStart + 1, Date.now());
    await watcher.poll();
    const runEnd = Date.now();

    const during = watcher.during(runStart, runEnd);
    expect(during.map((a) => [a.name, a.beganBeforeRun, a.endsAt === null])).toEqual([
      ['SlotLost', true, true],
      ['JobRunOverdue', false, false],
    ]);
    expect(during[0]?.startsAt).toBe(now - 60_000);
    expect(watcher.endedBefore(runStart).map((a) => a.name)).toEqual(['ConsumerDown']);
    expect(watcher.gaps()).toBeUndefined();
  }, 60_000);

  it('says how many polls Alertmanager left unanswered instead of reporting no alerts', async () => {
    const watcher = new AlertWatcher('http://127.0.0.1:9');
    await watcher.poll();
    await watcher.poll();
    expect(watcher.firing()).toEqual([]);
    expect(watcher.gaps()).toMatch(/^Alertmanager did not answer 2 of 2 polls/);
  });
});
