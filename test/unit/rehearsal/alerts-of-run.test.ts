/**
 * The alert-precision test's rule of which alerts are the run's (test/rehearsal/support/alerts-of-run.ts):
 * each boundary, both sides.
 */
import { describe, expect, it } from 'vitest';
import {
  type AlertSpan,
  type RunWindow,
  alertsOfTheRun,
  notTheRuns,
  programsUpAt,
  upSince,
} from '../../rehearsal/support/alerts-of-run.js';

const S = 1_000_000; // the run's start
const OWN = "about the rehearsal's programs, resolved within a scrape and an evaluation of their coming up";
const window: RunWindow = { startedAtMs: S, finishedAtMs: S + 200_000, programsUpAtMs: S - 20_000, settleMs: 30_000 };
const span = (name: string, firstFiringMs: number, lastFiringMs: number): AlertSpan => ({
  name,
  labels: '{}',
  firstFiringMs,
  lastFiringMs,
});

describe('notTheRuns', () => {
  const cases: [string, AlertSpan, string | undefined][] = [
    ['firing only before the run', span('ConsumerLagHigh', S - 60_000, S - 1), 'not firing during the run'],
    ['firing only after the run', span('ConsumerLagHigh', S + 200_001, S + 210_000), 'not firing during the run'],
    ['begun during the run', span('ConsumerLagHigh', S + 50_000, S + 60_000), undefined],
    ['begun at the run start', span('ConsumerLagHigh', S, S + 60_000), undefined],
    ['begun just before the run end', span('ConsumerLagHigh', S + 200_000, S + 210_000), undefined],
    [
      'firing before and into the run',
      span('ConsumerLagHigh', S - 1, S + 60_000),
      'already firing before the run began',
    ],
    [
      "a program's Down alert fired as the run began and resolved in the settle interval",
      span('ConsumerDown', S + 2_000, S + 10_000),
      OWN,
    ],
    ["a program's Down alert resolved at the settle interval's end", span('ConsumerDown', S, S + 10_000), OWN],
    [
      "a program's Down alert still firing after the settle interval",
      span('ConsumerDown', S + 2_000, S + 10_001),
      undefined,
    ],
    [
      'another alert resolved in the settle interval is still the run’s',
      span('ConsumerLagHigh', S + 2_000, S + 5_000),
      undefined,
    ],
  ];
  it.each(cases)('%s', (_, s, why) => {
    expect(notTheRuns(s, window)).toEqual(why);
  });

  it('keeps the run’s alerts only', () => {
    const mine = span('SeatServiceErrors', S + 1_000, S + 2_000);
    expect(alertsOfTheRun([span('ConsumerDown', S + 1_000, S + 2_000), mine], window)).toEqual([mine]);
  });
});

describe('upSince and programsUpAt', () => {
  it('is the first up after the last down before the run, or the first up when never down', () => {
    expect(
      upSince(
        [
          [1, 1],
          [2, 0],
          [3, 0],
          [4, 1],
          [5, 1],
        ],
        10,
      ),
    ).toBe(4);
    expect(
      upSince(
        [
          [1, 1],
          [2, 1],
        ],
        10,
      ),
    ).toBe(1);
    expect(
      upSince(
        [
          [1, 0],
          [2, 0],
        ],
        10,
      ),
    ).toBeUndefined();
    // A down during the run does not move it.
    expect(
      upSince(
        [
          [1, 0],
          [2, 1],
          [12, 0],
          [13, 1],
        ],
        10,
      ),
    ).toBe(2);
  });
  it('is the latest target, and undefined if a target never came up or there are none', () => {
    expect(
      programsUpAt(
        [
          [
            [1, 0],
            [3, 1],
          ],
          [
            [1, 0],
            [2, 0],
            [5, 1],
          ],
        ],
        10,
      ),
    ).toBe(5);
    expect(programsUpAt([[[1, 1]], [[1, 0]]], 10)).toBeUndefined();
    expect(programsUpAt([], 10)).toBeUndefined();
  });
});
