/**
 * A backlog six hours old (ce_time in the past: a long outage, or a lost-slot recovery's
 * re-emit) meets a transient failure. An effect that is right however late (keep-retrying) is
 * applied, with the past-deadline alert raised and then resolved; one whose meaning changes with
 * lateness (dead-letter) follows its policy only after its own late retry window.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import type { DeliveryPolicy, LatePolicy } from '../../consumers/runtime/types.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { adminQuery, requireStack } from '../support/stack.js';
import { type Drill, startDrill } from './helpers/drill.js';
import { appliedRows } from './helpers/counted-events.js';

const stack = requireStack();
installLeakGuard();

const SIX_HOURS_AGO = () => new Date(Date.now() - 6 * 3_600_000);
const POLICY: DeliveryPolicy = {
  deadlineMs: 3_600_000,
  lateRetryWindowMs: 8_000,
  deliveryLimit: 3,
  retryBaseMs: 100,
  retryCapMs: 1_000,
};

function backlogDrill(prefix: string, whenLate: LatePolicy): Promise<Drill> {
  return startDrill({ stack, prefix, policy: POLICY, counted: { whenLate } });
}

/** Makes the drill's database read-only for new sessions and ends the current ones. */
async function readOnly(drill: Drill, on: boolean): Promise<void> {
  const database = `"${drill.db.name}"`;
  await adminQuery(
    stack.postgresAdminUrl,
    on
      ? `alter database ${database} set default_transaction_read_only = on`
      : `alter database ${database} reset default_transaction_read_only`,
  );
  await drill.db.dropSessions();
}

describe('a six-hour-old backlog meets a transient failure', () => {
  it('keep-retrying: applied exactly once after the fault, the past-deadline alert raised then resolved, nothing dead-lettered', async () => {
    const drill = await backlogDrill('backlog_keep', 'keep-retrying');
    await drill.startConsumer();
    await readOnly(drill, true);
    const ids = await drill.load(drill.nextEvents(120, { time: SIX_HOURS_AGO() }), 1_000);
    await waitFor(() => drill.pastDeadline(), {
      timeoutMs: 30_000,
      description: 'the past-deadline alert series raised',
    });
    const raisedAt = Date.now();
    // The fault lasts well past the late retry window: a keep-retrying type never gives up.
    await waitFor(async () => Date.now() - raisedAt > 2 * POLICY.lateRetryWindowMs && (await drill.pastDeadline()), {
      timeoutMs: 60_000,
      description: 'the partition still held, past deadline, two windows later',
    });
    expect(await drill.deadLetters()).toEqual([]);
    await readOnly(drill, false);
    await drill.expectAllAppliedOnce(ids);
    await waitFor(async () => !(await drill.pastDeadline()) && (await drill.failingCodes()).length === 0, {
      timeoutMs: 30_000,
      description: 'the alert series resolved',
    });
    await drill.close();
  });

  it('dead-letter: a fault shorter than the late retry window dead-letters nothing; a longer one dead-letters "deadline exceeded" after the window', async () => {
    const drill = await backlogDrill('backlog_dlq', 'dead-letter');
    await drill.startConsumer();
    let retries = 0;
    drill.events.on('retry', () => (retries += 1));

    await readOnly(drill, true);
    const first = await drill.load(drill.nextEvents(60, { time: SIX_HOURS_AGO() }), 1_000);
    await waitFor(() => retries >= 2, { timeoutMs: 30_000, description: 'a few retries of the old events' });
    await readOnly(drill, false);
    await drill.expectAllAppliedOnce(first);

    await readOnly(drill, true);
    const second = await drill.load(drill.nextEvents(30, { time: SIX_HOURS_AGO() }), 1_000);
    const dead = await waitFor(
      async () => {
        const found = await drill.deadLetters();
        return found.length === second.length && found;
      },
      { timeoutMs: 60_000, description: `${second.length} dead letters` },
    );
    await readOnly(drill, false);
    expect(new Set(dead.map((d) => d.reason))).toEqual(new Set(['deadline exceeded']));
    expect(new Set(dead.map((d) => d.ceId))).toEqual(new Set(second));
    for (const letter of dead) {
      const retriedFor =
        Date.parse(String(letter.headers.dlq_dead_lettered_at)) -
        Date.parse(String(letter.headers.dlq_first_failure_at));
      expect(retriedFor).toBeGreaterThanOrEqual(POLICY.lateRetryWindowMs);
    }
    expect((await appliedRows(drill.pool, drill.name)).length).toBe(first.length);
    await drill.close();
  });
});
