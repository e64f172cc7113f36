import { describe, expect, it } from 'vitest';
import { restartAfterDeath, type RestartPolicy } from '../../../stack/restart-policy.js';

const policy: RestartPolicy = { backoffBaseMs: 1000, backoffMaxMs: 8000, stableAfterMs: 60_000 };

/** Dies `deaths` times, each `upMs` after its start: the delays the supervisor chose. */
function delays(deaths: number, upMs: number): number[] {
  let history = { crashLoop: 0, startedAt: 0 };
  const chosen: number[] = [];
  for (let i = 0; i < deaths; i++) {
    const decision = restartAfterDeath(history, history.startedAt + upMs, policy);
    chosen.push(decision.delayMs);
    history = decision.history;
  }
  return chosen;
}

describe('restartAfterDeath', () => {
  it('starts a process that ran for a while again at once, every time', () => {
    expect(delays(4, 60_000)).toEqual([0, 0, 0, 0]);
  });

  it('backs off a crash loop: at once, then 1, 2, 4 s, capped', () => {
    expect(delays(7, 500)).toEqual([0, 1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it('forgets the crash loop once the process stays up long enough', () => {
    let history = { crashLoop: 0, startedAt: 0 };
    for (const up of [500, 500, 500]) history = restartAfterDeath(history, history.startedAt + up, policy).history;
    expect(restartAfterDeath(history, history.startedAt + 59_999, policy).delayMs).toBe(4000);
    expect(restartAfterDeath(history, history.startedAt + 60_000, policy).delayMs).toBe(0);
  });

  it('counts the process as started when the delayed start is due', () => {
    const decision = restartAfterDeath({ crashLoop: 2, startedAt: 10_000 }, 10_500, policy);
    expect(decision).toEqual({ delayMs: 2000, history: { crashLoop: 3, startedAt: 12_500 } });
  });
});
