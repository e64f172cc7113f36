/** The email's pace: halved on a throttle (once a step, from what was achieved), raised by half a step later, never below the floor. */
import { describe, expect, it } from 'vitest';
import {
  type SendRatePolicy,
  accepted,
  initialSendRate,
  nextSlot,
  sendStarted,
  throttled,
} from '../../../consumers/confirmation-email/send-rate.js';

const policy: SendRatePolicy = { ceiling: Infinity, floor: 5, stepMs: 500 };

/** `count` sends spread over the second before `at`. */
function sent(count: number, at: number, state = initialSendRate(policy, at - 1000)) {
  let s = state;
  for (let i = 0; i < count; i++) s = sendStarted(s, at - 1000 + (i * 1000) / count);
  return s;
}

describe('the send pace', () => {
  it('is unpaced until the provider throttles, then half of what was achieved', () => {
    const state = sent(400, 10_000);
    expect(state.rate).toBe(Infinity);
    expect(nextSlot(state, 0, 10_000)).toEqual({ startAt: 10_000, nextAt: 10_000 });
    const slowed = throttled(state, policy, 10_000);
    expect(slowed.rate).toBe(200);
  });

  it('halves once a step, however many answers said slow down', () => {
    const once = throttled(sent(400, 10_000), policy, 10_000);
    const many = [10_100, 10_200, 10_499].reduce((s, t) => throttled(s, policy, t), once);
    expect(many.rate).toBe(200);
    expect(throttled(many, policy, 10_500).rate).toBe(100);
  });

  it('never falls below the floor', () => {
    let state = throttled(sent(8, 10_000), policy, 10_000);
    for (let t = 10_500; t < 20_000; t += 500) state = throttled(state, policy, t);
    expect(state.rate).toBe(5);
  });

  it('rises by half a whole step after the last change, and drops the pace altogether above 10,000/s', () => {
    const slowed = throttled(sent(100, 10_000), policy, 10_000); // 50/s
    expect(accepted(slowed, policy, 10_499).rate).toBe(50);
    const raised = accepted(slowed, policy, 10_500);
    expect(raised.rate).toBe(75);
    let state = raised;
    let t = 10_500;
    while (Number.isFinite(state.rate)) {
      t += 500;
      state = accepted(state, policy, t);
    }
    // from 50/s to unpaced in a few seconds once the provider stops throttling
    expect(t - 10_000).toBeLessThanOrEqual(7_000);
  });

  it('rises no higher than a configured ceiling', () => {
    const capped: SendRatePolicy = { ...policy, ceiling: 120 };
    let state = throttled(sent(100, 10_000, initialSendRate(capped, 9_000)), capped, 10_000);
    for (let t = 10_500; t <= 20_000; t += 500) state = accepted(state, capped, t);
    expect(state.rate).toBe(120);
  });

  it('spaces paced sends 1/rate apart from the first free slot', () => {
    const state = { ...initialSendRate(policy, 0), rate: 100 };
    const first = nextSlot(state, 0, 1_000);
    expect(first).toEqual({ startAt: 1_000, nextAt: 1_010 });
    expect(nextSlot(state, first.nextAt, 1_000)).toEqual({ startAt: 1_010, nextAt: 1_020 });
  });
});
