/**
 * Builds a running slot monitor from its configuration: the database pool, the alert sinks with
 * their delivery queues, the metrics server and the poll loop. `stop()` releases all of it in
 * reverse order of setup.
 */
import type { Logger } from '../../lib/logger.js';
import { createMetricsRegistry, serveHttp, type HttpEndpoint } from '../../lib/metrics.js';
import { createPool } from '../../lib/postgres.js';
import { Releasers } from '../../lib/shutdown.js';
import { alertmanagerSink, logSink, webhookSink, type AlertSink } from './alert-sinks.js';
import { DeliveryQueue } from './delivery-queue.js';
import { KeepSizeGuard } from './keep-size.js';
import { SlotMonitorMetrics } from './metrics.js';
import { SlotMonitor } from './monitor.js';
import { PROGRAM, type SlotMonitorConfig } from './settings.js';
import { databaseLabel } from './slot-readings.js';

export interface RunningSlotMonitor {
  monitor: SlotMonitor;
  /** The /metrics, /healthz and /readyz server. */
  http: HttpEndpoint;
  stop(): Promise<void>;
}

/** An alert not re-sent within this time expires at Alertmanager (Prometheus uses 4 × max(resend delay, evaluation interval)). */
export function alertTtlMs(config: SlotMonitorConfig): number {
  return 4 * Math.max(config.alertmanagerResendMs, config.pollIntervalMs);
}

function createSinks(config: SlotMonitorConfig, logger: Logger, metrics: SlotMonitorMetrics, releasers: Releasers): AlertSink[] {
  const queue = (sink: string): DeliveryQueue => {
    const created = new DeliveryQueue({
      sink,
      attempts: config.deliveryAttempts,
      timeoutMs: config.deliveryTimeoutMs,
      logger,
      onOutcome: (name, outcome) => metrics.recordDelivery(name, outcome),
    });
    releasers.add(`${sink} delivery queue`, () => created.close());
    return created;
  };
  const sinks = [logSink(logger)];
  if (config.alertmanagerUrl !== '') {
    sinks.push(alertmanagerSink({ url: config.alertmanagerUrl, ttlMs: alertTtlMs(config), queue: queue('alertmanager') }));
  }
  if (config.webhookUrl !== '') sinks.push(webhookSink({ url: config.webhookUrl, queue: queue('webhook') }));
  return sinks;
}

export async function startSlotMonitor(config: SlotMonitorConfig, logger: Logger): Promise<RunningSlotMonitor> {
  const releasers = new Releasers(logger);
  try {
    const registry = createMetricsRegistry(PROGRAM);
    const metrics = new SlotMonitorMetrics(registry, config.maxSlotWalKeepSize);
    const pool = createPool({
      connectionString: config.databaseUrl,
      applicationName: PROGRAM,
      logger,
      max: 1,
      connectionTimeoutMs: Math.min(5_000, Math.max(1_000, config.pollIntervalMs)),
    });
    releasers.add('seat database pool', () => pool.end());
    const sinks = createSinks(config, logger, metrics, releasers);
    const keepSize = new KeepSizeGuard({
      targetBytes: config.maxSlotWalKeepSize,
      mode: config.keepSizeMode,
      noticeDurationMs: config.noticeDurationMs,
      logger,
      onCorrected: () => metrics.recordCorrection(),
    });
    const monitor = new SlotMonitor({
      db: pool,
      databaseLabel: databaseLabel(config.databaseUrl),
      rules: config,
      outbox: { schema: config.outboxSchema, table: config.outboxTable },
      growthWindowPolls: config.growthWindowPolls,
      pollIntervalMs: config.pollIntervalMs,
      resendIntervalMs: config.alertmanagerResendMs,
      keepSize,
      sinks,
      metrics,
      logger,
    });
    const http = await serveHttp({ registry, port: config.metricsPort, host: config.metricsHost, ready: () => monitor.lastPollOk });
    releasers.add('metrics server', () => http.close());
    monitor.start();
    releasers.add('poll loop', () => monitor.stop());
    return { monitor, http, stop: async () => void (await releasers.releaseAll()) };
  } catch (err) {
    await releasers.releaseAll();
    throw err;
  }
}
