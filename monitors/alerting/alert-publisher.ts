/**
 * The part of a monitor's loop that is the same for every monitor: apply this poll's conditions
 * (plus the always-firing Watchdog heartbeat) to the tracker, hand starts and ends to the sinks,
 * and re-send active and recently resolved alerts on a timer, as Prometheus does.
 */
import type { AlertSink } from './alert-sinks.js';
import type { AlertCandidate, AlertTracker, TrackedAlert } from './alert-tracker.js';
import { HEARTBEAT_ALERTS } from '../alerts/heartbeat-alerts.js';

/** Resolved alerts are re-sent this long, so a lost "resolved" is repeated (Prometheus does 15 min). */
const RESOLVED_RESEND_MS = 15 * 60 * 1000;

/** A monitor's heartbeat: "the slot monitor is alive", always firing (the Alertmanager Watchdog convention). */
export function heartbeatAlert(monitor: string): AlertCandidate<'Watchdog'> {
  return {
    name: 'Watchdog',
    labels: {},
    summary: HEARTBEAT_ALERTS.Watchdog.summary({ sender: `The ${monitor}` }),
    description: `Heartbeat of the ${monitor} (the Alertmanager Watchdog convention). Route it to a dead man's switch.`,
  };
}

export interface AlertPublisherOptions<Name extends string> {
  tracker: AlertTracker<Name>;
  sinks: readonly AlertSink[];
  resendIntervalMs: number;
  /** Always firing while the monitor runs, so that its silence is noticed (the Alertmanager Watchdog convention). */
  heartbeat: AlertCandidate<Name>;
}

export class AlertPublisher<Name extends string> {
  readonly #options: AlertPublisherOptions<Name>;
  #resendTimer: NodeJS.Timeout | undefined;

  constructor(options: AlertPublisherOptions<Name>) {
    this.#options = options;
  }

  /** Applies the conditions that hold now; returns the alerts active afterwards. */
  publish(candidates: readonly AlertCandidate<Name>[], now: Date): TrackedAlert<Name>[] {
    const { tracker, sinks, heartbeat } = this.#options;
    const events = tracker.update([...candidates, heartbeat], now);
    for (const sink of sinks) sink.publish(events, now);
    return tracker.active();
  }

  /**
   * The conditions of a poll that could read nothing: every alert firing now stays firing (nobody
   * can tell whether it cleared), plus `alert` (the one that says why nothing could be read).
   */
  carriedOverWith(alert: AlertCandidate<Name>): AlertCandidate<Name>[] {
    const { tracker, heartbeat } = this.#options;
    const carried = tracker.activeCandidates((active) => active.name !== heartbeat.name && active.name !== alert.name);
    return [...carried, alert];
  }

  startResending(): void {
    this.#resendTimer ??= setInterval(() => this.resend(new Date()), this.#options.resendIntervalMs);
  }

  stopResending(): void {
    clearInterval(this.#resendTimer);
    this.#resendTimer = undefined;
  }

  resend(now: Date): void {
    const { tracker, sinks } = this.#options;
    const resolved = tracker.recentlyResolved(now, RESOLVED_RESEND_MS);
    for (const sink of sinks) sink.resend(tracker.active(), resolved, now);
  }
}
