/** The process's one gate for emails: its in-flight limit over every caller, and a throttle's pace turning long waits into a held partition. */
import { describe, expect, it } from 'vitest';
import { SendGate } from '../../../consumers/confirmation-email/send-gate.js';
import { classifyFailure, TransientError } from '../../../consumers/runtime/failures.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('the send gate', () => {
  it('never has more than its limit in flight, and starts the waiting ones in order', async () => {
    const gate = new SendGate({ maxInFlight: 2, ratePerSecond: 0, maxWaitMs: 1000 });
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const releases = Array.from({ length: 5 }, deferred);
    const sends = releases.map((release, i) =>
      gate.send(async () => {
        started.push(i);
        running += 1;
        most = Math.max(most, running);
        await release.promise;
        running -= 1;
      }),
    );
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    expect(gate.snapshot()).toMatchObject({ inFlight: 2, waiting: 3 });
    for (const release of releases) release.resolve();
    await Promise.all(sends);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
    expect(gate.snapshot()).toMatchObject({ inFlight: 0, waiting: 0 });
  });

  it('slows down after a throttle answer, and refuses a send that would wait too long, with the wait as its retry hint', async () => {
    let clock = 10_000;
    const gate = new SendGate({ maxInFlight: 10, ratePerSecond: 0, maxWaitMs: 300, now: () => clock });
    await gate.send(async () => {});
    const throttle = new TransientError('smtp_throttled', '451 slow down');
    await expect(gate.send(() => Promise.reject(throttle))).rejects.toBe(throttle);
    expect(gate.snapshot().rate).toBe(5); // the floor: two sends were all it had achieved
    clock += 1;
    await gate.send(async () => {}); // the first slot at the new pace is now
    await expect(gate.send(async () => {})).resolves.toBeUndefined(); // 200 ms later: waits, within 300 ms
    const refused = gate.send(async () => {});
    await expect(refused).rejects.toMatchObject({ code: 'smtp_throttled' });
    const failure = classifyFailure(await refused.catch((err: unknown) => err));
    expect(failure).toMatchObject({ kind: 'infrastructure', code: 'smtp_throttled' });
    expect(failure.kind === 'infrastructure' ? failure.retryAfterMs : undefined).toBeGreaterThan(300);
    expect(gate.snapshot().inFlight).toBe(0);
    // Its own refusals are not the provider's answers: a step later the pace is still 5/s, and an acceptance raises it.
    clock += 600;
    expect(gate.snapshot().rate).toBe(5);
    await gate.send(async () => {});
    expect(gate.snapshot().rate).toBe(7.5);
  });

  it("does not take its own refusals for the provider's: they leave the pace where it is", async () => {
    let clock = 10_000;
    const gate = new SendGate({ maxInFlight: 100, ratePerSecond: 0, maxWaitMs: 300, now: () => clock });
    for (let i = 0; i < 100; i++) {
      clock = 10_000 + i * 10;
      await gate.send(async () => {});
    }
    clock = 11_000;
    await gate.send(() => Promise.reject(new TransientError('smtp_throttled', '451'))).catch(() => undefined);
    expect(gate.snapshot().rate).toBe(50);
    // A step later the first acceptance raises it to 75/s, about 13 ms apart: some 23 fit in 300 ms,
    // the rest are refused by the gate itself, which must not halve it again.
    clock = 11_600;
    const sends = await Promise.allSettled(Array.from({ length: 40 }, () => gate.send(async () => {})));
    expect(sends.filter((r) => r.status === 'rejected').length).toBeGreaterThan(0);
    expect(gate.snapshot().rate).toBe(75);
  });

  it('holds an error that is not a throttle without slowing down', async () => {
    const gate = new SendGate({ maxInFlight: 1, ratePerSecond: 0, maxWaitMs: 300 });
    await expect(gate.send(() => Promise.reject(new TransientError('smtp_unavailable', 'down')))).rejects.toThrow(
      'down',
    );
    expect(gate.snapshot()).toMatchObject({ inFlight: 0, rate: Infinity });
  });
});
