/**
 * The decision step (decision.ts) over every rule: each case names the rule it must be decided
 * by, and a last test fails when a rule has no case (a branch of the failure model nobody tests).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DECISION_RULES,
  type Decision,
  type DecisionInput,
  type Outcome,
  decide,
  decidingRule,
} from '../../../consumers/runtime/decision.js';
import type { Failure } from '../../../consumers/runtime/failures.js';
import { DECISIONS_DOC, renderDecisionBlock } from '../../../scripts/docs-decisions.js';

const infrastructure: Failure = { kind: 'infrastructure', code: '25006', message: 'read-only' };
const poison: Failure = { kind: 'poison', reason: 'undecodable', message: 'bad bytes' };
const bug: Failure = { kind: 'handler-bug', code: 'TypeError', message: 'x is undefined', stack: 'TypeError: …' };
const onTime = { deadLetterNow: false, msUntilNextChange: 5_000 };
const dueNow = { deadLetterNow: true, msUntilNextChange: Infinity };
const failed = (failure: Failure): Outcome => ({ kind: 'failed', failure });
const LIMIT = 3;

interface Case {
  name: string;
  input: Partial<DecisionInput> & Pick<DecisionInput, 'unit' | 'outcome'>;
  /** The index in DECISION_RULES that must decide it. */
  rule: number;
  expected: Decision;
}

const wait = (backoffAttempt: number, maxDelayMs: number): Decision => ({ kind: 'wait', backoffAttempt, maxDelayMs });

const cases: Case[] = [
  // abandoned, applied
  ...(['group', 'record', 'dead-letter'] as const).flatMap((unit): Case[] => [
    {
      name: `${unit} abandoned: abandon`,
      input: { unit, outcome: { kind: 'abandoned' } },
      rule: 0,
      expected: { kind: 'abandon' },
    },
    {
      name: `${unit} applied: go on`,
      input: { unit, outcome: { kind: 'applied' } },
      rule: 1,
      expected: { kind: 'apply' },
    },
  ]),
  {
    name: 'a group whose first record does not decode: isolate (alone it finds out whether it is poison)',
    input: { unit: 'group', outcome: { kind: 'not-decodable' } },
    rule: 2,
    expected: { kind: 'isolate' },
  },
  // counted, before the try
  {
    name: 'a group counted after a try that never finished: isolate',
    input: { unit: 'group', outcome: { kind: 'counted', unfinishedBefore: true }, attempts: 2 },
    rule: 3,
    expected: { kind: 'isolate' },
  },
  {
    name: 'a group counted for the first time: apply',
    input: { unit: 'group', outcome: { kind: 'counted', unfinishedBefore: false }, attempts: 1 },
    rule: 5,
    expected: { kind: 'apply' },
  },
  {
    name: 'a record counted past the limit after crashes: dead-letter as crashed the consumer',
    input: { unit: 'record', outcome: { kind: 'counted', unfinishedBefore: true }, attempts: LIMIT + 1 },
    rule: 4,
    expected: { kind: 'dead-letter', reason: 'crashed the consumer', attempts: LIMIT },
  },
  {
    name: 'a record counted past the limit after poison: dead-letter with the last poison reason',
    input: {
      unit: 'record',
      outcome: { kind: 'counted', unfinishedBefore: false, lastReason: 'data error' },
      attempts: LIMIT + 1,
    },
    rule: 4,
    expected: { kind: 'dead-letter', reason: 'data error', attempts: LIMIT },
  },
  {
    name: 'a record counted at the limit (its last try): apply',
    input: { unit: 'record', outcome: { kind: 'counted', unfinishedBefore: true }, attempts: LIMIT },
    rule: 5,
    expected: { kind: 'apply' },
  },
  // the dead letter itself
  {
    name: 'Kafka refused the dead letter: wait, by this process’s attempts',
    input: { unit: 'dead-letter', outcome: failed(infrastructure), attempt: 2 },
    rule: 6,
    expected: wait(2, Infinity),
  },
  // a group failed
  {
    name: 'a poison group: isolate',
    input: { unit: 'group', outcome: failed(poison) },
    rule: 7,
    expected: { kind: 'isolate' },
  },
  {
    name: 'a handler bug in a group: isolate, so the record that triggers it is named',
    input: { unit: 'group', outcome: failed(bug), late: onTime },
    rule: 7,
    expected: { kind: 'isolate' },
  },
  {
    name: 'an infrastructure failure of a group past a dead-letter deadline: isolate',
    input: { unit: 'group', outcome: failed(infrastructure), late: dueNow },
    rule: 8,
    expected: { kind: 'isolate' },
  },
  {
    name: 'an infrastructure failure of a group: wait, uncounted, never past the next deadline decision',
    input: { unit: 'group', outcome: failed(infrastructure), late: onTime, attempt: 3 },
    rule: 12,
    expected: wait(3, 5_000),
  },
  // a record alone failed
  {
    name: 'poison at the limit: dead-letter with its reason',
    input: { unit: 'record', outcome: failed(poison), attempts: LIMIT, attempt: 2 },
    rule: 9,
    expected: { kind: 'dead-letter', reason: 'undecodable', attempts: LIMIT },
  },
  {
    name: 'poison below the limit: wait by its durable count, the next try counted',
    input: { unit: 'record', outcome: failed(poison), attempts: 2, attempt: 0 },
    rule: 10,
    expected: wait(1, Infinity),
  },
  {
    name: 'an infrastructure failure past a dead-letter deadline: dead-letter as late',
    input: { unit: 'record', outcome: failed(infrastructure), late: dueNow, attempt: 4 },
    rule: 11,
    expected: { kind: 'dead-letter', reason: 'deadline exceeded', attempts: 5 },
  },
  {
    name: 'a handler bug past a dead-letter deadline: dead-letter as late (the deadline policy, never poison)',
    input: { unit: 'record', outcome: failed(bug), late: dueNow, attempt: 4, attempts: LIMIT },
    rule: 11,
    expected: { kind: 'dead-letter', reason: 'deadline exceeded', attempts: 5 },
  },
  {
    name: 'an infrastructure failure of a record with a count at the limit: wait (never counted against it)',
    input: { unit: 'record', outcome: failed(infrastructure), late: onTime, attempt: 7, attempts: LIMIT + 2 },
    rule: 12,
    expected: wait(7, 5_000),
  },
  {
    name: 'a handler bug of a record with a count at the limit: wait, never poison',
    input: { unit: 'record', outcome: failed(bug), late: onTime, attempt: 9, attempts: LIMIT },
    rule: 12,
    expected: wait(9, 5_000),
  },
  {
    name: 'a failure with no deadline ahead: wait without a cap',
    input: { unit: 'record', outcome: failed(bug), late: undefined, attempt: 1 },
    rule: 12,
    expected: wait(1, Infinity),
  },
];

describe('decide: what the partition does after a try', () => {
  it.each(cases)('$name', ({ input, rule, expected }) => {
    const full: DecisionInput = { attempt: 0, attempts: 1, deliveryLimit: LIMIT, ...input };
    expect(decide(full)).toEqual(expected);
    expect(DECISION_RULES.indexOf(decidingRule(full))).toBe(rule);
  });

  it('every rule decides at least one case', () => {
    const used = new Set(cases.map((c) => c.rule));
    const unused = DECISION_RULES.flatMap((rule, index) =>
      used.has(index) ? [] : [`${index}: ${rule.decision} ${rule.when}`],
    );
    expect(unused).toEqual([]);
  });
});

describe('the decision table in docs/consumers.md', () => {
  it('is the rules as the code has them (npm run docs:decisions rewrites it)', () => {
    const doc = readFileSync(DECISIONS_DOC, 'utf8');
    expect(
      renderDecisionBlock(doc) === doc,
      'docs/consumers.md decision table is stale: run npm run docs:decisions',
    ).toBe(true);
  });
});
