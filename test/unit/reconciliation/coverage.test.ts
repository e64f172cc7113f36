/** Which reconciliations count for the outbox purge: clean, a real window, every consumer checked. */
import { describe, expect, it } from 'vitest';
import {
  CONSUMER_KINDS,
  eventTypesOf,
  type ReconciledConsumer,
} from '../../../monitors/reconciliation/consumer-kinds.js';
import { notCovering } from '../../../monitors/reconciliation/coverage.js';
import type { Reconciliation } from '../../../monitors/reconciliation/reconcile.js';

const every: ReconciledConsumer[] = CONSUMER_KINDS.map((kind) => ({
  kind,
  name: kind,
  eventTypes: eventTypesOf(kind),
}));
const from = new Date('2026-11-01T00:00:00Z');
const to = new Date('2026-11-08T00:00:00Z');

function result(overrides: Partial<Reconciliation>): Reconciliation {
  return { from, to, consumers: [], gaps: false, unsent: false, ...overrides };
}

describe('notCovering', () => {
  it.each([
    { name: 'a clean run of every consumer', run: result({}), consumers: every, why: undefined },
    { name: 'a run with gaps', run: result({ gaps: true }), consumers: every, why: /found gaps/ },
    {
      name: 'a run with an email claimed and never sent',
      run: result({ unsent: true }),
      consumers: every,
      why: /claimed and never stamped sent/,
    },
    { name: 'an empty window', run: result({ to: from }), consumers: every, why: /window is empty/ },
    {
      name: 'a run that left a consumer out',
      run: result({}),
      consumers: every.slice(0, 2),
      why: /leaves out confirmation-email/,
    },
  ])('$name', ({ run, consumers, why }) => {
    const found = notCovering(run, consumers);
    if (why === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(why);
  });
});
