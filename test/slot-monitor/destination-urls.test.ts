/**
 * A webhook URL often carries a token (in its path, query or userinfo): the monitor logs where its
 * alerts go as scheme://host:port only, at start and when a delivery fails.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { parseSlotMonitorConfig } from '../../monitors/slot-monitor/settings.js';
import { startSlotMonitor } from '../../monitors/slot-monitor/slot-monitor.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { captureLogs } from '../unit/lib/log-capture.js';
import { startMonitorProcess } from './support/monitor-under-test.js';

installLeakGuard();

const TOKEN = 's3cr3t-token';

/** A webhook that refuses everything, so deliveries fail and are logged. */
async function refusingWebhook() {
  const server = createServer(
    (_req, res) => void res.writeHead(503).end('not welcome, see http://127.0.0.1:9/help/page'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = track('refusing webhook', () => new Promise<void>((resolve) => server.close(() => resolve())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close };
}

describe('alert destination URLs in the log', () => {
  const env = (webhookUrl: string) => ({
    SLOT_MONITOR_DATABASE_URL: 'postgres://slot_monitor:x@127.0.0.1:1/seats',
    SLOT_MONITOR_POLL_INTERVAL_MS: '200',
    // Nothing listens on port 1: every Alertmanager delivery fails and is logged too.
    SLOT_MONITOR_ALERTMANAGER_URL: `http://am:${TOKEN}@127.0.0.1:1/prefix/${TOKEN}`,
    SLOT_MONITOR_WEBHOOK_URL: webhookUrl,
    SLOT_MONITOR_DELIVERY_ATTEMPTS: '2',
    SLOT_MONITOR_METRICS_PORT: '0',
  });

  it('failed deliveries name the webhook by its origin only', async () => {
    const webhook = await refusingWebhook();
    const { logger, lines } = captureLogs('debug');
    const monitor = await startSlotMonitor(
      parseSlotMonitorConfig(env(`${webhook.origin}/hook/${TOKEN}?key=${TOKEN}`)),
      logger,
    );
    try {
      await waitFor(() => lines.some((line) => String(line.msg).includes('delivery to webhook failed 2 times')), {
        timeoutMs: 20_000,
        description: 'a dropped webhook delivery in the log',
      });
    } finally {
      await monitor.stop();
      await webhook.close();
    }
    const failures = lines.filter((line) => String(line.msg).startsWith('delivery to webhook failed'));
    expect(failures.map((line) => line.error)).toContain(
      `POST to ${webhook.origin} answered 503 Service Unavailable: not welcome, see http://127.0.0.1:9`,
    );
    expect(lines.some((line) => String(line.msg).startsWith('delivery to alertmanager failed'))).toBe(true);
    expect(
      lines.filter(
        (line) => JSON.stringify(line).includes(`/hook/${TOKEN}`) || JSON.stringify(line).includes(`:${TOKEN}@`),
      ),
    ).toEqual([]);
  });

  it('a URL with a password that fetch refuses is logged without it', async () => {
    const { logger, lines } = captureLogs('debug');
    const monitor = await startSlotMonitor(
      parseSlotMonitorConfig(env(`http://alerts:${TOKEN}@127.0.0.1:1/hook`)),
      logger,
    );
    try {
      await waitFor(() => lines.some((line) => String(line.msg).includes('delivery to webhook failed 2 times')), {
        timeoutMs: 20_000,
        description: 'a dropped webhook delivery in the log',
      });
    } finally {
      await monitor.stop();
    }
    expect(lines.filter((line) => JSON.stringify(line).includes(TOKEN))).toEqual([]);
  });

  it('the start line shows the destinations as scheme://host:port', async () => {
    const webhook = await refusingWebhook();
    const monitor = await startMonitorProcess(env(`${webhook.origin}/hook/${TOKEN}`));
    await monitor.close();
    await webhook.close();
    const start =
      monitor
        .output()
        .split('\n')
        .find((line) => line.includes('starting the slot monitor')) ?? '';
    expect(JSON.parse(start)).toMatchObject({
      config: { webhookUrl: webhook.origin, alertmanagerUrl: 'http://127.0.0.1:1' },
    });
    expect(monitor.output()).not.toContain(TOKEN);
  });
});
