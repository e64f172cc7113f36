/**
 * The alerts a drill promises (rehearsal/drill-alerts.ts): promised only when the part was away
 * for the rule's `for` plus a scrape, an evaluation and the delivery; kept when the alert began
 * within the drill's window and resolved by the end of the run.
 */
import { describe, expect, it } from 'vitest';
import { DRILL_TARGETS } from '../../../rehearsal/drill-targets.js';
import {
  DRILL_ALERT_PROMISES,
  brokenPromises,
  firesWithinMs,
  promisedAlerts,
} from '../../../rehearsal/drill-alerts.js';
import type { AlertRecord } from '../../../rehearsal/record.js';
import { ALL_ALERTS } from '../../../monitors/alerts/catalog.js';

const INTERVAL = 15_000;
const KILL = 1_000_000;

function alertRecord(name: string, startsAt: number, endsAt: number | null): AlertRecord {
  return { name, severity: 'critical', startsAt, endsAt, beganBeforeRun: false };
}

describe('the alerts a drill promises', () => {
  it('ConsumerDown (for 1m) fires within 1m + a scrape + an evaluation + delivery', () => {
    expect(firesWithinMs('ConsumerDown', INTERVAL)).toBe(60_000 + 2 * INTERVAL + 5_000);
    expect(firesWithinMs('HoldSweeperDown', INTERVAL)).toBe(120_000 + 2 * INTERVAL + 5_000);
  });

  it('a drill shorter than the alert takes to fire promises nothing; a long enough one promises it', () => {
    expect(promisedAlerts('consumer', 5_000, INTERVAL)).toEqual([]);
    expect(promisedAlerts('consumer', 94_999, INTERVAL)).toEqual([]);
    expect(promisedAlerts('consumer', 95_000, INTERVAL)).toEqual(['ConsumerDown']);
    expect(promisedAlerts('sweeper', 95_000, INTERVAL)).toEqual([]);
    expect(promisedAlerts('connect', 600_000, INTERVAL)).toEqual([]);
  });

  it('every drill target has its promises, each an alert of the catalogue with a Prometheus rule', () => {
    expect(Object.keys(DRILL_ALERT_PROMISES).sort()).toEqual([...DRILL_TARGETS].sort());
    for (const names of Object.values(DRILL_ALERT_PROMISES))
      for (const name of names) expect(ALL_ALERTS[name]?.rule, name).toBeDefined();
  });

  const drill = { target: 'consumer' as const, killedAt: KILL, backAt: KILL + 100_000 };
  const windowEnd = drill.backAt + 120_000;
  const runEnd = windowEnd + 10_000;

  it('kept: the promised alert began after the kill, within the window, and resolved before the end', () => {
    const alerts = [alertRecord('ConsumerDown', KILL + 70_000, drill.backAt + 20_000)];
    expect(brokenPromises(drill, alerts, INTERVAL, windowEnd, runEnd)).toEqual([]);
  });

  it('broken: not raised at all, raised before the kill, or raised after the window', () => {
    for (const alerts of [
      [],
      [alertRecord('ConsumerDown', KILL - 1, KILL + 5_000)],
      [alertRecord('ConsumerDown', windowEnd + 1, windowEnd + 2)],
      [alertRecord('ConsumerLagGrowing', KILL + 70_000, drill.backAt + 20_000)],
    ])
      expect(brokenPromises(drill, alerts, INTERVAL, windowEnd, runEnd)).toEqual([
        'ConsumerDown was not raised (consumer was away 100 s, longer than the 95 s it takes to fire)',
      ]);
  });

  it('broken: raised but still firing at the end of the run', () => {
    for (const endsAt of [null, runEnd + 1])
      expect(
        brokenPromises(drill, [alertRecord('ConsumerDown', KILL + 70_000, endsAt)], INTERVAL, windowEnd, runEnd),
      ).toEqual(['ConsumerDown was raised but had not resolved by the end of the run']);
  });

  it('a drill whose part never came back promises nothing here (its verdict fails for that already)', () => {
    expect(brokenPromises({ ...drill, backAt: null }, [], INTERVAL, windowEnd, runEnd)).toEqual([]);
  });
});
