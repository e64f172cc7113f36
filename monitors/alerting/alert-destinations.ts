/**
 * Builds a monitor's alert sinks from its settings: always the log, Alertmanager and a generic
 * webhook when their URLs are set, each with its own delivery queue closed on shutdown.
 */
import type { Logger } from '../../lib/logger.js';
import type { Releasers } from '../../lib/shutdown.js';
import { alertmanagerSink, logSink, webhookSink, type AlertSink } from './alert-sinks.js';
import { DeliveryQueue, type DeliveryOutcome } from './delivery-queue.js';

export interface AlertDestinations {
  /** Names the monitor in webhook bodies: "slot-monitor", "job-watchdog". */
  source: string;
  /** Empty: no Alertmanager. */
  alertmanagerUrl: string;
  /** A firing alert not re-sent within this time expires at Alertmanager. */
  alertTtlMs: number;
  /** Empty: no webhook. */
  webhookUrl: string;
  deliveryAttempts: number;
  deliveryTimeoutMs: number;
}

export function createAlertSinks(
  destinations: AlertDestinations,
  logger: Logger,
  releasers: Releasers,
  onOutcome: (sink: string, outcome: DeliveryOutcome) => void,
): AlertSink[] {
  const queue = (sink: string): DeliveryQueue => {
    const created = new DeliveryQueue({
      sink,
      attempts: destinations.deliveryAttempts,
      timeoutMs: destinations.deliveryTimeoutMs,
      logger,
      onOutcome,
    });
    releasers.add(`${sink} delivery queue`, () => created.close());
    return created;
  };
  const sinks = [logSink(logger)];
  if (destinations.alertmanagerUrl !== '') {
    sinks.push(
      alertmanagerSink({
        url: destinations.alertmanagerUrl,
        ttlMs: destinations.alertTtlMs,
        queue: queue('alertmanager'),
      }),
    );
  }
  if (destinations.webhookUrl !== '') {
    sinks.push(webhookSink({ url: destinations.webhookUrl, source: destinations.source, queue: queue('webhook') }));
  }
  return sinks;
}
