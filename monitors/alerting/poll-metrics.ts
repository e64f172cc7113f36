/**
 * The metrics every polling monitor exports, named with its prefix: `<prefix>_database_up`,
 * `<prefix>_last_successful_poll_timestamp_seconds`, `<prefix>_polls_total`,
 * `<prefix>_alerts_firing` and `<prefix>_alert_deliveries_total`. A monitor's metrics class
 * extends this one with what it reads.
 */
import { Counter, Gauge, type LabelValues, type Registry } from 'prom-client';
import type { TrackedAlert } from './alert-tracker.js';
import type { DeliveryOutcome } from './delivery-queue.js';
import type { PollOutcome, PollRecorder } from './poll-loop.js';

export interface PollMetricsNames<AlertLabel extends string> {
  /** "slot_monitor", "job_watchdog". */
  prefix: string;
  /** The monitor in help texts: "monitor", "watchdog". */
  monitor: string;
  /** What a successful poll read, in help texts: "the slots". */
  reads: string;
  /** The label of an alert that `<prefix>_alerts_firing` breaks down by besides its name: "slot_name". */
  alertLabel: AlertLabel;
}

type FiringLabel<AlertLabel extends string> = 'alertname' | 'severity' | AlertLabel;

export class PollMetrics<AlertLabel extends string> implements PollRecorder {
  readonly #alertLabel: AlertLabel;
  readonly #databaseUp: Gauge;
  readonly #lastSuccess: Gauge;
  readonly #polls: Counter<'outcome'>;
  readonly #alertsFiring: Gauge<FiringLabel<AlertLabel>>;
  readonly #deliveries: Counter<'sink' | 'outcome'>;

  constructor(registry: Registry, { prefix, monitor, reads, alertLabel }: PollMetricsNames<AlertLabel>) {
    const registers = [registry];
    this.#alertLabel = alertLabel;
    this.#databaseUp = new Gauge({
      name: `${prefix}_database_up`,
      help: '1 when the last poll could query the seat database.',
      registers,
    });
    this.#lastSuccess = new Gauge({
      name: `${prefix}_last_successful_poll_timestamp_seconds`,
      help: `Unix time of the last poll that read ${reads}.`,
      registers,
    });
    this.#polls = new Counter({
      name: `${prefix}_polls_total`,
      help: 'Polls of the seat database by outcome.',
      labelNames: ['outcome'] as const,
      registers,
    });
    const firingLabels: FiringLabel<AlertLabel>[] = ['alertname', 'severity', alertLabel];
    this.#alertsFiring = new Gauge({
      name: `${prefix}_alerts_firing`,
      help: `Alerts the ${monitor} has firing, by name.`,
      labelNames: firingLabels,
      registers,
    });
    this.#deliveries = new Counter({
      name: `${prefix}_alert_deliveries_total`,
      help: 'Alert delivery attempts by destination and outcome.',
      labelNames: ['sink', 'outcome'] as const,
      registers,
    });
  }

  recordPoll({ ok, at }: PollOutcome): void {
    this.#polls.inc({ outcome: ok ? 'ok' : 'failed' });
    this.#databaseUp.set(ok ? 1 : 0);
    if (ok) this.#lastSuccess.set(at.getTime() / 1000);
  }

  recordAlerts(active: readonly TrackedAlert[]): void {
    this.#alertsFiring.reset();
    for (const alert of active) {
      const labels: LabelValues<FiringLabel<AlertLabel>> = {};
      labels.alertname = alert.name;
      labels.severity = alert.severity;
      labels[this.#alertLabel] = alert.labels[this.#alertLabel] ?? '';
      this.#alertsFiring.inc(labels);
    }
  }

  recordDelivery(sink: string, outcome: DeliveryOutcome): void {
    this.#deliveries.inc({ sink, outcome });
  }
}
