/**
 * Alert lifecycles and delivery without the database: an alert starts once and resolves once
 * however many polls see it, and a failing destination is retried, logged and never throws.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.js';
import { envExample } from '../../lib/settings.js';
import { RUNBOOK_DOCUMENT, runbookUrl, type AlertCatalog } from '../../monitors/alerting/alert-tracker.js';
import { JOB_ALERTS } from '../../monitors/job-watchdog/alert-catalog.js';
import { ALERTS } from '../../monitors/slot-monitor/alert-catalog.js';
import { AlertTracker, type AlertCandidate } from '../../monitors/slot-monitor/alert-tracker.js';
import type { DatabaseReading } from '../../monitors/slot-monitor/slot-readings.js';
import { burstBetweenConfirmations, WalRate, walBurstCandidate } from '../../monitors/slot-monitor/wal-rate.js';
import { DeliveryQueue, postJson, type DeliveryOutcome } from '../../monitors/alerting/delivery-queue.js';
import { slotMonitorSettings } from '../../monitors/slot-monitor/settings.js';
import { projectRoot } from '../../stack/config.js';
import { installLeakGuard, track } from '../support/leak-guard.js';

installLeakGuard();

const lost: AlertCandidate = { name: 'SlotLost', labels: { slot_name: 'cdc' }, summary: 's', description: 'd' };

describe('alert lifecycle', () => {
  it('fires when a condition starts and resolves when it clears, never once per poll', () => {
    const tracker = new AlertTracker({
      staticLabels: { service: 'slot-monitor' },
      generatorUrl: 'http://monitor:9188/metrics',
    });
    const at = (second: number) => new Date(second * 1000);
    const kinds = [
      tracker.update([lost], at(1)),
      tracker.update([lost], at(2)),
      tracker.update([{ ...lost, description: 'newer numbers' }], at(3)),
      tracker.update([], at(4)),
      tracker.update([], at(5)),
      tracker.update([lost], at(6)),
    ].map((events) => events.map((e) => `${e.kind} ${e.alert.name}`));
    expect(kinds).toEqual([['firing SlotLost'], [], [], ['resolved SlotLost'], [], ['firing SlotLost']]);
    expect(tracker.active()[0]?.labels).toEqual({
      alertname: 'SlotLost',
      severity: 'critical',
      service: 'slot-monitor',
      slot_name: 'cdc',
    });
    expect(tracker.recentlyResolved(at(7), 60_000).map((a) => a.endsAt)).toEqual([at(4)]);
  });
});

describe('delivery', () => {
  async function flakyServer(failures: number) {
    const bodies: unknown[] = [];
    let calls = 0;
    const server = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => {
        calls += 1;
        if (calls <= failures) return void res.writeHead(503).end('not yet');
        bodies.push(JSON.parse(text));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const close = track('flaky http server', () => new Promise<void>((resolve) => server.close(() => resolve())));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, bodies, close };
  }

  it('retries a failing destination, keeps the order, and gives up on one delivery without stopping the next', async () => {
    const server = await flakyServer(2);
    const outcomes: DeliveryOutcome[] = [];
    const lines: string[] = [];
    const logger = createLogger({
      name: 'delivery-test',
      destination: { write: (line: string) => void lines.push(line) },
    });
    const queue = new DeliveryQueue({
      sink: 'webhook',
      attempts: 3,
      timeoutMs: 1000,
      logger,
      onOutcome: (_, outcome) => outcomes.push(outcome),
    });
    queue.enqueue('first', (signal) => postJson(server.url, { n: 1 }, signal));
    queue.enqueue('second', (signal) => postJson(server.url, { n: 2 }, signal));
    queue.enqueue('to nowhere', (signal) => postJson('http://127.0.0.1:1/', { n: 3 }, signal));
    queue.enqueue('third', (signal) => postJson(server.url, { n: 4 }, signal));
    await queue.idle();
    expect(server.bodies).toEqual([{ n: 1 }, { n: 2 }, { n: 4 }]);
    expect(outcomes).toEqual([
      'retried',
      'retried',
      'delivered',
      'delivered',
      'retried',
      'retried',
      'failed',
      'delivered',
    ]);
    expect(lines.filter((line) => line.includes('retrying'))).toHaveLength(4);
    expect(lines.filter((line) => line.includes('failed 3 times; dropped it'))).toHaveLength(1);
    await queue.close();
    await server.close();
  });
});

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

describe('runbook links', () => {
  it('every alert of both monitors and of the Prometheus rules links to a heading of docs/operations.md', () => {
    const runbooks = readFileSync(join(projectRoot, RUNBOOK_DOCUMENT), 'utf8');
    const anchors = new Set([...runbooks.matchAll(/^#{1,6} (.+)$/gm)].map((m) => headingAnchor(m[1] ?? '')));
    const catalogs: AlertCatalog<string>[] = [ALERTS, JOB_ALERTS];
    const links = catalogs.flatMap((catalog) => Object.keys(catalog).map((name) => runbookUrl(name)));
    for (const file of ['slot-alerts.rules.yml', 'job-alerts.rules.yml', 'consumer-alerts.rules.yml']) {
      const rules = readFileSync(join(projectRoot, 'monitors', 'prometheus', file), 'utf8');
      links.push(...[...rules.matchAll(/runbook_url: (\S+)/g)].map((m) => m[1] ?? ''));
    }
    expect(links.length).toBeGreaterThan(20);
    expect(
      links.filter(
        (link) => !link.startsWith(`${RUNBOOK_DOCUMENT}#`) || !anchors.has(link.slice(RUNBOOK_DOCUMENT.length + 1)),
      ),
    ).toEqual([]);
  });
});

describe('settings', () => {
  it('ships an .env.example generated from the settings table', () => {
    const shipped = readFileSync(join(projectRoot, 'monitors', 'slot-monitor', '.env.example'), 'utf8');
    expect(shipped).toBe(envExample(slotMonitorSettings));
  });
});

describe('WAL rate and the burst between confirmations', () => {
  const rules = { offsetFlushIntervalMs: 1000, heartbeatIntervalMs: 1000, walBurstMargin: 2, walRateWindowMs: 60_000 };
  const reading = (cap: number): DatabaseReading => ({
    takenAt: new Date(0),
    slots: [],
    maxSlotWalKeepSizeBytes: cap,
    walPositionBytes: 0,
    outboxInserts: null,
  });
  const MB = 1024 * 1024;

  it('keeps the peak rate between polls within the window, and restarts when the position goes back', () => {
    const rate = new WalRate(60_000);
    const at = (second: number) => new Date(second * 1000);
    rate.observe(at(0), 0);
    expect(rate.peakBytesPerSecond()).toBeUndefined();
    rate.observe(at(10), 100 * MB);
    rate.observe(at(20), 110 * MB);
    expect(rate.peakBytesPerSecond()).toBe(10 * MB);
    rate.observe(at(70), 120 * MB);
    expect(rate.peakBytesPerSecond()).toBe(1 * MB);
    rate.observe(at(80), 5 * MB);
    expect(rate.peakBytesPerSecond(), 'no rate from a position that went back; 20 s left the window').toBeCloseTo(
      0.2 * MB,
    );
    rate.observe(at(90), 25 * MB);
    expect(rate.peakBytesPerSecond()).toBe(2 * MB);
  });

  it('warns when the cap is below peak × (15 s running-transactions interval + flush + heartbeat) × margin, naming the cap to set; never at -1', () => {
    expect(burstBetweenConfirmations(10 * MB, rules)).toBe(340 * MB);
    expect(walBurstCandidate(reading(400 * MB), 10 * MB, rules)).toBeUndefined();
    expect(walBurstCandidate(reading(-1), 10 * MB, rules)).toBeUndefined();
    expect(walBurstCandidate(reading(32 * MB), undefined, rules)).toBeUndefined();
    const warning = walBurstCandidate(reading(32 * MB), 1 * MB, rules);
    expect(warning?.name).toBe('SlotCapTooSmallForWalRate');
    expect(warning?.summary).toBe(
      'max_slot_wal_keep_size (32 MB) is smaller than the 34 MB of WAL this database wrote at its peak between two confirmations of an active slot: raise SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE to at least 34MB.',
    );
  });
});
