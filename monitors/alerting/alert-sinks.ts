/**
 * Where alerts go: Alertmanager (v2 API, re-sent while active as Prometheus does), a generic
 * JSON webhook, and the log. Deliveries go through a DeliveryQueue, so they retry and never throw.
 */
import type { Logger } from '../../lib/logger.js';
import type { AlertEvent, TrackedAlert } from './alert-tracker.js';
import { postJson, type DeliveryQueue } from './delivery-queue.js';

export interface AlertSink {
  /** Alerts that started or resolved at this poll. */
  publish(events: readonly AlertEvent[], now: Date): void;
  /** Every active alert and the recently resolved ones, sent again on a timer. */
  resend(active: readonly TrackedAlert[], resolved: readonly TrackedAlert[], now: Date): void;
}

/** The body of one alert in Alertmanager's POST /api/v2/alerts. */
interface PostableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
}

/** A firing alert ends at `now + ttlMs` unless sent again; a resolved one at its resolution time. */
function toPostableAlert(alert: TrackedAlert, now: Date, ttlMs: number): PostableAlert {
  const endsAt = alert.endsAt ?? new Date(now.getTime() + ttlMs);
  return {
    labels: alert.labels,
    annotations: alert.annotations,
    startsAt: alert.startsAt.toISOString(),
    endsAt: endsAt.toISOString(),
    generatorURL: alert.generatorUrl,
  };
}

export function alertmanagerSink(options: { url: string; ttlMs: number; queue: DeliveryQueue }): AlertSink {
  const endpoint = `${options.url.replace(/\/+$/, '')}/api/v2/alerts`;
  const send = (alerts: readonly TrackedAlert[], now: Date, what: string): void => {
    if (alerts.length === 0) return;
    const body = alerts.map((alert) => toPostableAlert(alert, now, options.ttlMs));
    options.queue.enqueue(what, (signal) => postJson(endpoint, body, signal));
  };
  return {
    publish: (events, now) =>
      send(
        events.map((event) => event.alert),
        now,
        `${events.length} alert changes`,
      ),
    resend: (active, resolved, now) =>
      send([...active, ...resolved], now, `resend of ${active.length} active, ${resolved.length} resolved`),
  };
}

/** The JSON a generic webhook receives, one POST per alert that starts or resolves; `source` names the monitor. */
function webhookBody(event: AlertEvent, source: string): Record<string, unknown> {
  const { alert } = event;
  return {
    source,
    status: event.kind,
    alertname: alert.name,
    severity: alert.severity,
    labels: alert.labels,
    summary: alert.annotations.summary,
    description: alert.annotations.description,
    runbook: alert.annotations.runbook.split('\n'),
    runbookUrl: alert.annotations.runbook_url,
    generatorURL: alert.generatorUrl,
    startsAt: alert.startsAt.toISOString(),
    endsAt: alert.endsAt?.toISOString() ?? null,
  };
}

export function webhookSink(options: { url: string; source: string; queue: DeliveryQueue }): AlertSink {
  return {
    publish(events) {
      for (const event of events) {
        options.queue.enqueue(`${event.alert.name} ${event.kind}`, (signal) =>
          postJson(options.url, webhookBody(event, options.source), signal),
        );
      }
    },
    resend: () => undefined,
  };
}

export function logSink(logger: Logger): AlertSink {
  return {
    publish(events) {
      for (const { kind, alert } of events) {
        const fields = {
          alert: alert.name,
          severity: alert.severity,
          labels: alert.labels,
          description: alert.annotations.description,
        };
        if (kind === 'resolved') logger.info(fields, `RESOLVED ${alert.name}: ${alert.annotations.summary}`);
        else if (alert.severity === 'critical')
          logger.error(
            { ...fields, runbook: alert.annotations.runbook },
            `FIRING ${alert.name}: ${alert.annotations.summary}`,
          );
        else if (alert.severity === 'warning')
          logger.warn(
            { ...fields, runbook: alert.annotations.runbook },
            `FIRING ${alert.name}: ${alert.annotations.summary}`,
          );
        else logger.info(fields, `FIRING ${alert.name}: ${alert.annotations.summary}`);
      }
    },
    resend: () => undefined,
  };
}
