/**
 * The rebalance drill's precondition (test/consumers/helpers/redelivery.ts): each way a drill can
 * be vacuous is named, and a drill that tested what it claims passes.
 */
import { describe, expect, it } from 'vitest';
import { rebalancePreconditionProblems, redeliveries, type Delivery } from '../../consumers/helpers/redelivery.js';

const member = (partitions: number[]) => ({ memberId: `m-${partitions.join('')}`, clientId: 'c', partitions });
const both = [member([0, 1, 2]), member([3, 4, 5])];
const d = (m: number, key: string, seq: number): Delivery => ({ member: m, key, seq });

describe('redeliveries', () => {
  it('tells an event delivered twice to one member from one delivered to both', () => {
    expect(redeliveries([d(0, 'k0', 1), d(0, 'k0', 1), d(0, 'k1', 1), d(1, 'k1', 1), d(1, 'k2', 1)])).toEqual({
      redelivered: ['k0#1', 'k1#1'],
      movedInFlight: ['k1#1'],
    });
    expect(redeliveries([])).toEqual({ redelivered: [], movedInFlight: [] });
  });
});

describe('rebalancePreconditionProblems', () => {
  const cases: { name: string; owners: ReturnType<typeof member>[]; deliveries: Delivery[]; problems: RegExp[] }[] = [
    {
      name: 'both owned partitions and a batch in flight went to the other member',
      owners: both,
      deliveries: [d(0, 'k0', 1), d(0, 'k0', 2), d(1, 'k0', 2), d(1, 'k0', 3)],
      problems: [],
    },
    {
      name: 'no rebalance at all: one member, each record once',
      owners: [member([0, 1, 2, 3, 4, 5])],
      deliveries: [d(0, 'k0', 1), d(0, 'k0', 2)],
      problems: [/^only 1 member\(s\) owned partitions/, /^no record was delivered to two members \(0 delivered/],
    },
    {
      name: 'a second member that owned nothing',
      owners: [member([0, 1, 2, 3, 4, 5]), member([])],
      deliveries: [d(0, 'k0', 1), d(1, 'k0', 1)],
      problems: [/^only 1 member\(s\) owned partitions while both were in the group \(\[0,1,2,3,4,5\] \[\]\)$/],
    },
    {
      name: 'the second member joined between batches: nothing delivered again',
      owners: both,
      deliveries: [d(0, 'k0', 1), d(1, 'k0', 2), d(0, 'k1', 1)],
      problems: [/no rebalance caught a batch in flight$/],
    },
    {
      name: 'redelivered only to the member that had it (its partition stayed)',
      owners: both,
      deliveries: [d(0, 'k0', 1), d(0, 'k0', 1), d(1, 'k1', 1)],
      problems: [/^no record was delivered to two members \(1 delivered twice to one member\)/],
    },
    { name: 'no group, nothing delivered', owners: [], deliveries: [], problems: [/no members/, /no record/] },
  ];
  it.each(cases)('$name', ({ owners, deliveries, problems }) => {
    const found = rebalancePreconditionProblems(owners, deliveries);
    expect(found).toHaveLength(problems.length);
    problems.forEach((problem, i) => expect(found[i]).toMatch(problem));
  });
});
