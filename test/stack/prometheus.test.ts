/**
 * Prometheus as a real process: the stack's own instance loads every rules file and scrapes the
 * programs on their default ports; a rule evaluated by a real Prometheus reaches a real
 * Alertmanager and its webhook, firing and then resolved.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seatAvailabilitySettings } from '../../consumers/seat-availability/consumer.js';
import { confirmationEmailSettings } from '../../consumers/confirmation-email/consumer.js';
import { salesLedgerSettings } from '../../consumers/sales-ledger/consumer.js';
import { waitFor } from '../../lib/wait.js';
import { jobWatchdogSettings } from '../../monitors/job-watchdog/settings.js';
import { slotMonitorSettings } from '../../monitors/slot-monitor/settings.js';
import { holdSweeperSettings } from '../../seat-service/sweeper-settings.js';
import { projectRoot, stackLayout } from '../../stack/config.js';
import { scrapeTargetsDir } from '../../stack/scrape-targets.js';
import { SCRAPE_PORTS, prometheusConfig } from '../../stack/prometheus-config.js';
import { freePort, startAlertmanager, type AlertmanagerProcess } from '../slot-monitor/support/alertmanager-process.js';
import { received, startWebhookReceiver, type WebhookReceiver } from '../slot-monitor/support/webhook-receiver.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { requireStack } from '../support/stack.js';
import { startPrometheus } from './support/prometheus-process.js';

const stack = requireStack();
installLeakGuard();

const rulesDir = join(projectRoot, 'monitors', 'prometheus');
const ruleFiles = readdirSync(rulesDir).filter((file) => file.endsWith('.rules.yml'));

interface RulesApi {
  data: { groups: { name: string; file: string }[] };
}
interface TargetsApi {
  data: { activeTargets: { labels: Record<string, string>; scrapeUrl: string }[] };
}

describe("the stack's Prometheus", () => {
  it("loads every rules file of monitors/prometheus and sends to the stack's Alertmanager", async () => {
    const rules = (await (await fetch(`${stack.prometheusUrl}/api/v1/rules`)).json()) as RulesApi;
    expect(new Set(rules.data.groups.map((group) => group.file.split('/').pop()))).toEqual(new Set(ruleFiles));
    expect(ruleFiles.length).toBeGreaterThanOrEqual(3);
    const alertmanagers = await waitFor(
      async () => {
        const body = (await (await fetch(`${stack.prometheusUrl}/api/v1/alertmanagers`)).json()) as {
          data: { activeAlertmanagers: { url: string }[] };
        };
        return body.data.activeAlertmanagers.length > 0 && body.data.activeAlertmanagers;
      },
      { timeoutMs: 15_000, description: 'Prometheus to discover its Alertmanager' },
    );
    expect(alertmanagers.map((am) => am.url)).toEqual([`${stack.alertmanagerUrl}/api/v2/alerts`]);
  });

  it('scrapes the slot monitor, job watchdog, hold sweeper and consumers on their default metrics ports, and what programs announced', async () => {
    const targets = (await (await fetch(`${stack.prometheusUrl}/api/v1/targets`)).json()) as TargetsApi;
    const scraped = targets.data.activeTargets.map((target) => `${target.labels.job} ${target.scrapeUrl}`).sort();
    // Besides the default ports, exactly what running programs announced (stack/scrape-targets.ts).
    const folder = scrapeTargetsDir(stackLayout().home);
    const announced = Object.keys(SCRAPE_PORTS).flatMap((job) =>
      readdirSync(join(folder, job))
        .filter((file) => file.endsWith('.json'))
        .flatMap((file) =>
          (JSON.parse(readFileSync(join(folder, job, file), 'utf8')) as { targets: string[] }[]).flatMap((group) =>
            group.targets.map((address) => `${job} http://${address}/metrics`),
          ),
        ),
    );
    const expected = [
      ...new Set([
        ...Object.entries(SCRAPE_PORTS).flatMap(([job, ports]) =>
          ports.map((port) => `${job} http://127.0.0.1:${port}/metrics`),
        ),
        ...announced,
      ]),
    ].sort();
    expect(scraped).toEqual(expected);
    const defaults = (settings: { metricsPort: { default: string | undefined } }) =>
      Number(settings.metricsPort.default);
    expect(SCRAPE_PORTS).toEqual({
      'slot-monitor': [defaults(slotMonitorSettings.settings)],
      'job-watchdog': [defaults(jobWatchdogSettings.settings)],
      'hold-sweeper': [defaults(holdSweeperSettings.settings)],
      consumers: [seatAvailabilitySettings, confirmationEmailSettings, salesLedgerSettings].map((def) =>
        defaults(def.settings),
      ),
    });
  });
});

describe('a rule evaluated by a real Prometheus reaches Alertmanager', () => {
  let receiver: WebhookReceiver;
  let alertmanager: AlertmanagerProcess;
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    alertmanager = await startAlertmanager(receiver);
  });

  afterAll(async () => {
    await alertmanager?.close();
    await receiver?.close();
    console.log('prometheus → alertmanager timings (ms):', timings);
  });

  /** A consumer's metrics endpoint that answers, on `port`. */
  async function serveMetrics(port: number): Promise<() => Promise<void>> {
    const server = createServer((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end('consumer_lag_records{consumer="seat-availability",topic="t",partition="0"} 0\n'),
    );
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return track(
      'fake consumer metrics',
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
  }

  it('ConsumerDown fires for a consumer that does not answer, and resolves when it does', async () => {
    const consumerPort = await freePort();
    const prometheus = await startPrometheus((dir) => {
      // The real rules file, with its `for:` durations shortened so the test takes seconds, not minutes.
      const rules = readFileSync(join(rulesDir, 'consumer-alerts.rules.yml'), 'utf8').replace(
        /^(\s+)for: \S+$/gm,
        '$1for: 1s',
      );
      writeFileSync(join(dir, 'consumer-alerts.rules.yml'), rules);
      return prometheusConfig({
        targetHost: '127.0.0.1',
        alertmanager: alertmanager.url.replace('http://', ''),
        ruleFiles: [join(dir, '*.rules.yml')],
        scrapeInterval: '500ms',
        evaluationInterval: '500ms',
        scrapeJobs: { consumers: [`127.0.0.1:${consumerPort}`] },
      });
    });
    const startedAt = Date.now();
    const [down] = await waitFor(
      () => received(receiver, 'ConsumerDown', 'firing').length > 0 && received(receiver, 'ConsumerDown', 'firing'),
      {
        timeoutMs: 30_000,
        description: 'ConsumerDown from Prometheus to reach the webhook through Alertmanager',
      },
    );
    timings.consumerDownFromPrometheusStart = (down?.receivedAt ?? 0) - startedAt;
    expect(down?.labels).toMatchObject({
      severity: 'critical',
      job: 'consumers',
      instance: `127.0.0.1:${consumerPort}`,
    });
    expect(down?.annotations.runbook_url).toBe('docs/operations.md#consumerdown');

    const upAt = Date.now();
    const stopServing = await serveMetrics(consumerPort);
    await waitFor(() => received(receiver, 'ConsumerDown', 'resolved').length > 0, {
      timeoutMs: 30_000,
      description: 'ConsumerDown to resolve',
    });
    timings.consumerDownResolvedAfterUp = (received(receiver, 'ConsumerDown', 'resolved')[0]?.receivedAt ?? 0) - upAt;
    await stopServing();
    await prometheus.close();
  }, 90_000);
});
