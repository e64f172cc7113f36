/**
 * The decision step of the runtime, pure: given what happened to one try of a unit (a group of
 * records, one record alone, or a record's dead letter), how late its events are, its attempt
 * counts and the delivery limit, what the partition does next. The rules are data (`DECISION_RULES`):
 * the first that matches decides, the unit tests go through every one of them, and docs/consumers.md
 * prints them (`npm run docs:decisions`).
 */
import type { DeadLetterReason, Failure } from './failures.js';

/** `group`: records applied together; `record`: one record alone (isolating); `dead-letter`: its dead letter being sent. */
export type Unit = 'group' | 'record' | 'dead-letter';

/** What one try of the unit came to. */
export type Outcome =
  /** Its durable attempt is counted (the try is about to start); `unfinishedBefore`: a count shows an earlier try that never finished (the process died in it). */
  | { kind: 'counted'; unfinishedBefore: boolean; lastReason?: DeadLetterReason | undefined }
  /** Its effects were applied (or it was skipped, or its dead letter sent) and its offsets committed. */
  | { kind: 'applied' }
  /** A group's first record does not decode now: poison, or the registry is away. */
  | { kind: 'not-decodable' }
  /** The batch is no longer this member's to finish: a stop, a rebalance, a failed commit or heartbeat. */
  | { kind: 'abandoned' }
  | { kind: 'failed'; failure: Failure };

export interface DecisionInput {
  unit: Unit;
  outcome: Outcome;
  /** How late the unit's events are; known after a failure that is not the record's. */
  late?: { deadLetterNow: boolean; msUntilNextChange: number } | undefined;
  /** Tries of this unit so far in this process, this one not included: the backoff's attempt. */
  attempt: number;
  /** The durable count against the record (poison failures and tries that never finished), this try included. */
  attempts: number;
  deliveryLimit: number;
}

export type Decision =
  /** Go on: try the unit now (after its count), or, once it is applied, the next one. */
  | { kind: 'apply' }
  /** Hold the partition and try the same unit again after a backoff. */
  | { kind: 'wait'; backoffAttempt: number; maxDelayMs: number }
  /** Take the unit's records one at a time, so each meets its own fate. */
  | { kind: 'isolate' }
  | { kind: 'dead-letter'; reason: DeadLetterReason; attempts: number }
  /** Return at once, uncommitted: the records are delivered again (the inbox makes that safe). */
  | { kind: 'abandon' };

type DecisionKind = Decision['kind'];

/** The outcome as the rules read it: a failure by its kind. */
type OutcomeName = Exclude<Outcome['kind'], 'failed'> | Failure['kind'];

export interface DecisionRule {
  unit: Unit | 'any';
  outcome: OutcomeName | 'any' | readonly OutcomeName[];
  /** The condition in words ('' when the rule always applies to its unit and outcome). */
  when: string;
  test?: (input: DecisionInput) => boolean;
  decision: DecisionKind;
  /** What the decision carries, in words. */
  then: string;
  decide: (input: DecisionInput) => Decision;
}

function outcomeName(outcome: Outcome): OutcomeName {
  return outcome.kind === 'failed' ? outcome.failure.kind : outcome.kind;
}

const notTheRecords = ['infrastructure', 'handler-bug'] as const satisfies readonly OutcomeName[];

/** Wait out a failure that is not the record's: it counts nothing against the record, never past the next deadline decision. */
function waitUncounted({ attempt, late }: DecisionInput): Decision {
  return { kind: 'wait', backoffAttempt: attempt, maxDelayMs: late?.msUntilNextChange ?? Infinity };
}

function poisonReason(input: DecisionInput): DeadLetterReason {
  return input.outcome.kind === 'failed' && input.outcome.failure.kind === 'poison'
    ? input.outcome.failure.reason
    : 'undecodable';
}

/** In order; the first that matches decides. */
export const DECISION_RULES: readonly DecisionRule[] = [
  {
    unit: 'any',
    outcome: 'abandoned',
    when: '',
    decision: 'abandon',
    then: 'nothing committed; the records come again',
    decide: () => ({ kind: 'abandon' }),
  },
  {
    unit: 'any',
    outcome: 'applied',
    when: '',
    decision: 'apply',
    then: 'offsets committed; the next unit',
    decide: () => ({ kind: 'apply' }),
  },
  {
    unit: 'any',
    outcome: 'not-decodable',
    when: '',
    decision: 'isolate',
    then: 'its first record alone finds out which: poison, or the registry away',
    decide: () => ({ kind: 'isolate' }),
  },
  {
    unit: 'group',
    outcome: 'counted',
    when: 'an earlier try never finished (the process died in it)',
    test: ({ outcome }) => outcome.kind === 'counted' && outcome.unfinishedBefore,
    decision: 'isolate',
    then: 'the culprit is unknown: each record of the group alone',
    decide: () => ({ kind: 'isolate' }),
  },
  {
    unit: 'record',
    outcome: 'counted',
    when: 'attempts > `DELIVERY_LIMIT`',
    test: ({ attempts, deliveryLimit }) => attempts > deliveryLimit,
    decision: 'dead-letter',
    then: 'reason: the last poison failure, else `crashed the consumer`',
    decide: ({ outcome, attempts }) => ({
      kind: 'dead-letter',
      reason: (outcome.kind === 'counted' ? outcome.lastReason : undefined) ?? 'crashed the consumer',
      attempts: attempts - 1,
    }),
  },
  {
    unit: 'any',
    outcome: 'counted',
    when: '',
    decision: 'apply',
    then: 'the try starts',
    decide: () => ({ kind: 'apply' }),
  },
  {
    unit: 'dead-letter',
    outcome: ['infrastructure', 'poison', 'handler-bug'],
    when: 'Kafka did not take the dead letter',
    decision: 'wait',
    then: 'the same dead letter again after a backoff',
    decide: ({ attempt }) => ({ kind: 'wait', backoffAttempt: attempt, maxDelayMs: Infinity }),
  },
  {
    unit: 'group',
    outcome: ['poison', 'handler-bug'],
    when: '',
    decision: 'isolate',
    then: 'the record at fault is found (and named in the log), the others applied',
    decide: () => ({ kind: 'isolate' }),
  },
  {
    unit: 'group',
    outcome: 'infrastructure',
    when: "an event's `dead-letter` deadline is due",
    test: ({ late }) => late?.deadLetterNow === true,
    decision: 'isolate',
    then: 'each record meets its own policy',
    decide: () => ({ kind: 'isolate' }),
  },
  {
    unit: 'record',
    outcome: 'poison',
    when: 'attempts ≥ `DELIVERY_LIMIT`',
    test: ({ attempts, deliveryLimit }) => attempts >= deliveryLimit,
    decision: 'dead-letter',
    then: 'with the poison reason',
    decide: (input) => ({ kind: 'dead-letter', reason: poisonReason(input), attempts: input.attempts }),
  },
  {
    unit: 'record',
    outcome: 'poison',
    when: '',
    decision: 'wait',
    then: 'backoff by attempts; the failure counts against the record',
    decide: ({ attempts }) => ({ kind: 'wait', backoffAttempt: attempts - 1, maxDelayMs: Infinity }),
  },
  {
    unit: 'record',
    outcome: notTheRecords,
    when: "the event's `dead-letter` deadline is due",
    test: ({ late }) => late?.deadLetterNow === true,
    decision: 'dead-letter',
    then: 'reason `deadline exceeded`',
    decide: ({ attempt }) => ({ kind: 'dead-letter', reason: 'deadline exceeded', attempts: attempt + 1 }),
  },
  {
    unit: 'any',
    outcome: notTheRecords,
    when: '',
    decision: 'wait',
    then: 'the same unit again, nothing counted against the record, never past the next deadline decision',
    decide: waitUncounted,
  },
];

function matches(rule: DecisionRule, input: DecisionInput): boolean {
  const name = outcomeName(input.outcome);
  if (rule.unit !== 'any' && rule.unit !== input.unit) return false;
  if (
    rule.outcome !== 'any' &&
    (typeof rule.outcome === 'string' ? rule.outcome !== name : !rule.outcome.includes(name))
  )
    return false;
  return rule.test === undefined || rule.test(input);
}

/** The rule that decides `input` (every input meets one: the last rules of each unit have no condition). */
export function decidingRule(input: DecisionInput): DecisionRule {
  const rule = DECISION_RULES.find((candidate) => matches(candidate, input));
  if (rule === undefined) throw new Error(`no decision rule for ${input.unit} ${outcomeName(input.outcome)}`);
  return rule;
}

/** What the partition does next. */
export function decide(input: DecisionInput): Decision {
  return decidingRule(input).decide(input);
}
