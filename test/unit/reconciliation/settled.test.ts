/** When a drained run may be judged: every event handled to the end, not merely received. */
import { describe, expect, it } from 'vitest';
import { CONSUMER_KINDS, eventTypesOf } from '../../../monitors/reconciliation/consumer-kinds.js';
import { type ConsumerReconciliation, settled } from '../../../monitors/reconciliation/reconcile.js';

const [kind] = CONSUMER_KINDS;
const tally = (counts: Partial<ConsumerReconciliation>): ConsumerReconciliation => ({
  consumer: { kind: kind!, name: kind!, eventTypes: eventTypesOf(kind!) },
  published: 10,
  handled: 10,
  claimed: 0,
  unsent: 0,
  unsentIds: [],
  missing: 0,
  missingIds: [],
  oldestMissingAt: undefined,
  ...counts,
});
const run = (...consumers: ConsumerReconciliation[]) => ({
  from: new Date(0),
  to: new Date(1),
  consumers,
  gaps: consumers.some((c) => c.missing > 0),
  unsent: consumers.some((c) => c.unsent > 0),
});

describe('settled', () => {
  it('is settled when every consumer handled every event', () => {
    expect(settled(run(tally({}), tally({ published: 0, handled: 0 })))).toBe(true);
  });
  it('is not settled while an event is missing from an inbox', () => {
    expect(settled(run(tally({ handled: 9, missing: 1 })))).toBe(false);
  });
  it('is not settled while an email is claimed within the grace and not yet stamped sent', () => {
    expect(settled(run(tally({}), tally({ handled: 9, claimed: 1 })))).toBe(false);
    expect(settled(run(tally({ handled: 8, claimed: 2, unsent: 1 })))).toBe(false);
  });
  it('is settled with a claim past the grace: a finding for the checks, not a send in flight', () => {
    expect(settled(run(tally({ handled: 9, claimed: 1, unsent: 1 })))).toBe(true);
  });
});
