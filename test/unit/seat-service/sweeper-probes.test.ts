import { describe, expect, it } from 'vitest';
import type { SweepRun } from '../../../seat-service/sweeper.js';
import {
  SweeperProbes,
  stallLimitMs,
  sweeperLiveness,
  sweeperReadiness,
  type SweeperProgress,
} from '../../../seat-service/sweeper-probes.js';

const INTERVAL = 15_000;
const T0 = Date.parse('2026-12-01T10:00:00Z');

function run(outcome: SweepRun['outcome']): SweepRun {
  return { slot: new Date(T0), outcome, expired: 0, durationMs: 5 };
}

function progress(lastRun?: SweepRun, lastRunAt?: number, ended = false): SweeperProgress {
  return { startedAt: T0, lastRun, lastRunAt, ended };
}

describe('sweeperReadiness', () => {
  it.each<[string, SweeperProgress, boolean, string?]>([
    ['before the first run slot', progress(), false, 'no run slot tried yet'],
    ['after a run that succeeded', progress(run('succeeded'), T0), true],
    ['after a slot another sweeper had', progress(run('claimed_elsewhere'), T0), true],
    ['after a claim the database did not answer', progress(run('claim_failed'), T0), false, 'seat database'],
    ['after a run that failed', progress(run('failed'), T0), false, 'hold sweep failed'],
    ['once the loop has ended', progress(run('succeeded'), T0, true), false, 'ended'],
  ])('%s: ready %s', (_what, given, ready, reason) => {
    const answer = sweeperReadiness(given);
    expect(answer.ok).toBe(ready);
    if (!answer.ok) expect(answer.reason).toContain(reason);
  });
});

describe('sweeperLiveness', () => {
  const limit = stallLimitMs(INTERVAL);
  it.each<[string, SweeperProgress, number, boolean]>([
    ['just started', progress(), T0, true],
    ['started, first slot still running, within the limit', progress(), T0 + limit, true],
    ['started, nothing finished past the limit', progress(), T0 + limit + 1, false],
    ['a slot finished lately, whatever its outcome', progress(run('claim_failed'), T0 + limit), T0 + limit + 1, true],
    ['the last slot finished past the limit', progress(run('succeeded'), T0), T0 + limit + 1, false],
    ['the loop has ended', progress(run('succeeded'), T0, true), T0, false],
  ])('%s: live %s', (_what, given, now, live) => {
    expect(sweeperLiveness(given, now, INTERVAL).ok).toBe(live);
  });

  it('allows at least five minutes, and ten intervals of a slow sweeper', () => {
    expect(stallLimitMs(1_000)).toBe(300_000);
    expect(stallLimitMs(60_000)).toBe(600_000);
  });
});

describe('SweeperProbes', () => {
  it('answers the checks the metrics endpoint serves, throwing the reason when not fine', () => {
    const probes = new SweeperProbes(INTERVAL);
    expect(probes.health()).toBe(true);
    expect(() => probes.ready()).toThrow('no run slot tried yet');
    probes.recordRun(run('succeeded'));
    expect(probes.ready()).toBe(true);
    probes.recordRun(run('claim_failed'));
    expect(() => probes.ready()).toThrow('seat database');
    probes.recordEnd();
    expect(() => probes.health()).toThrow('ended');
  });
});
