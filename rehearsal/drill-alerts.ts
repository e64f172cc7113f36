/**
 * What each drill promises on-call: the alerts a real outage of its part pages them with, as the
 * runbook (docs/operations.md) describes them. A drill keeps a promise when its part was away long
 * enough for the alert's rule to fire (its `for`, one scrape and one rule evaluation of the stack's
 * Prometheus, and the time the alert takes to reach Alertmanager): then the alert must begin
 * between the kill and the end of the drill's alert window, and must have resolved by the end of
 * the run. A shorter drill promises nothing (a drill at the default, its part started again at once, is shorter than every `for`).
 * Pure: the rehearsal feeds it the drill's times and the alerts Alertmanager held.
 */
import { CONSUMER_ALERTS, JOB_ALERTS, SLOT_ALERTS } from '../monitors/alerts/catalog.js';
import { durationSeconds } from '../monitors/alerts/rule-intervals.js';
import type { DrillTarget } from './drill-targets.js';
import type { AlertRecord } from './record.js';

const PROMISABLE = { ...CONSUMER_ALERTS, ...JOB_ALERTS, ...SLOT_ALERTS };
export type PromisableAlert = keyof typeof PROMISABLE;

/**
 * The alerts each drill's part pages on-call with when it is down for longer than the alert's
 * `for`. Kafka, Connect and the registry: none within minutes (a stopped slot is SlotInactive
 * after 5 minutes; the consumers hold their partitions and wait, and nothing is late yet).
 */
export const DRILL_ALERT_PROMISES: Readonly<Record<DrillTarget, readonly PromisableAlert[]>> = {
  connect: [],
  kafka: [],
  registry: [],
  consumer: ['ConsumerDown'],
  'seat-db': ['SlotMonitorDatabaseUnreachable', 'JobWatchdogDatabaseUnreachable'],
  sweeper: ['HoldSweeperDown'],
  failover: [],
};

/** Besides the rule's `for`, a scrape and an evaluation: how long an alert may take to reach Alertmanager. */
const DELIVERY_MS = 5_000;

/** How long a part must be away before `alert` is sure to have fired, with the stack's Prometheus interval. */
export function firesWithinMs(alert: PromisableAlert, prometheusIntervalMs: number): number {
  const rule = PROMISABLE[alert].rule;
  const forMs = rule?.for === undefined ? 0 : durationSeconds(rule.for) * 1000;
  return forMs + 2 * prometheusIntervalMs + DELIVERY_MS;
}

/** The alerts a drill of `target` promises, away for `awayMs` (from the kill until it was back). */
export function promisedAlerts(target: DrillTarget, awayMs: number, prometheusIntervalMs: number): PromisableAlert[] {
  return DRILL_ALERT_PROMISES[target].filter((alert) => firesWithinMs(alert, prometheusIntervalMs) <= awayMs);
}

export interface DrillTimes {
  target: DrillTarget;
  killedAt: number;
  backAt: number | null;
}

/**
 * The promises a drill broke, in words (empty: kept): a promised alert that did not begin between
 * the kill and `windowEnd`, or that was still firing at `runEnd`.
 */
export function brokenPromises(
  drill: DrillTimes,
  alerts: readonly AlertRecord[],
  prometheusIntervalMs: number,
  windowEnd: number,
  runEnd: number,
): string[] {
  if (drill.backAt === null) return [];
  const awayMs = drill.backAt - drill.killedAt;
  return promisedAlerts(drill.target, awayMs, prometheusIntervalMs).flatMap((name) => {
    const raised = alerts.filter((a) => a.name === name && a.startsAt >= drill.killedAt && a.startsAt <= windowEnd);
    const away = `${drill.target} was away ${Math.round(awayMs / 1000)} s, longer than the ${Math.round(firesWithinMs(name, prometheusIntervalMs) / 1000)} s it takes to fire`;
    if (raised.length === 0) return [`${name} was not raised (${away})`];
    if (raised.some((a) => a.endsAt === null || a.endsAt > runEnd))
      return [`${name} was raised but had not resolved by the end of the run`];
    return [];
  });
}
