/**
 * A small rehearsal with two fault drills, run the way a user runs it (npm run rehearsal -- --drill
 * consumer,connect) under the machine-wide rehearsal lock: one of its consumers and the stack's
 * Kafka Connect worker are killed with -9 during the crowd and started again. Its verdicts are
 * counted again from the seat database, Kafka read by the test's own client and each consumer's
 * inbox and effect tables, and must agree with what its record says. It kills a component of the
 * stack the suite runs on, so it ends only when every component answers again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectorStatus, isRunning } from '../../connectors/connect-client.js';
import { waitFor } from '../../lib/wait.js';
import { stackLayout } from '../../stack/config.js';
import { stackStatus, startStack } from '../../stack/launcher.js';
import { testLogger } from '../support/seat-pipeline.js';
import { requireStack, uniqueName } from '../support/stack.js';
import {
  drillProblems,
  freshAtRecounted,
  independentOutcome,
  stackSources,
  topicEnds,
} from './support/independent-outcome.js';
import { runRehearsal } from './support/run-rehearsal.js';

const stack = requireStack();

const reportDir = mkdtempSync(join(tmpdir(), 'stagefront-rehearsal-drills-'));

afterAll(async () => {
  // Tests after this one need the whole stack: whatever the drills left down is started again.
  if ((await stackStatus()).some((c) => !c.healthy)) await startStack(testLogger);
  rmSync(reportDir, { recursive: true, force: true });
}, 300_000);

describe('a rehearsal with fault drills', () => {
  it('kills a consumer and Kafka Connect with -9 during the crowd, brings both back, and nothing was lost, doubled or oversold, counted again from the databases and Kafka', async () => {
    const show = uniqueName('drills').replace(/_/g, '-');
    const sources = stackSources(stackLayout());
    const from = await topicEnds(sources);
    const { record, tail, text, html } = await runRehearsal({
      show,
      drills: 'consumer,connect',
      lockTimeoutS: 120,
      env: {
        REHEARSAL_BUYERS: '300',
        REHEARSAL_COUNTDOWN_MS: '0',
        REHEARSAL_DRILL_SPACING_MS: '10000',
        REHEARSAL_DRILL_DOWN_MS: '2000',
        // Correctness and alerts only: a busy machine's time to fresh must not fail this test.
        REHEARSAL_JUDGE_FRESHNESS: 'no',
        REHEARSAL_REPORT_DIR: reportDir,
      },
    });

    // The outcome from the seat database, Kafka and the consumers' tables, not from the record.
    const outcome = await independentOutcome(show, sources, from);
    expect(outcome.problems, tail).toEqual([]);
    expect(outcome.orders).toBeGreaterThan(0);
    expect(outcome.orders).toBe(record.crowd.confirmed);
    // The record's verdicts say the same.
    expect(
      record.checks.filter((c) => !c.ok),
      tail,
    ).toEqual([]);

    expect(record.drills.map((d) => d.target)).toEqual(['consumer', 'connect']);
    for (const [i, drill] of record.drills.entries()) {
      expect(drill.restartedAt, `${drill.target} restarted`).not.toBeNull();
      expect(drill.backAt, `${drill.target} back`).not.toBeNull();
      expect(drill.restartedAt ?? 0).toBeGreaterThan(drill.killedAt);
      expect(drill.backAt ?? 0).toBeGreaterThanOrEqual(drill.restartedAt ?? Infinity);
      expect(drill.caughtUpAt ?? null, `${drill.target}: the consumers caught up after it`).not.toBeNull();
      // Killed during the crowd, not before it began.
      expect(drill.killedAt).toBeGreaterThanOrEqual(record.startedAt);
      // Its verdict recounted: every event written from its kill to the next drill's handled by every consumer.
      const to = record.drills[i + 1]?.killedAt ?? Infinity;
      expect(drillProblems(outcome, drill.killedAt, to), drill.target).toEqual([]);
      expect(
        outcome.outbox.filter((row) => row.created_ms >= drill.killedAt && row.created_ms < to).length,
      ).toBeGreaterThan(0);
      expect(drill.verdict.ok, drill.verdict.detail).toBe(true);
      // Its time to fresh recounted from the outbox and the inbox: the crowd's view was right again then.
      const fresh = freshAtRecounted(outcome, drill.killedAt, Math.min(to, record.finishedAt));
      expect(fresh, `${drill.target}: seat availability received events after the kill`).not.toBeNull();
      expect(drill.freshAt ?? null, `${drill.target}: time to fresh`).toBeCloseTo(fresh!, 0);
      expect(text).toContain(`fresh again +${((fresh! - drill.killedAt) / 1000).toFixed(1)} s`);
      // Correctness only (REHEARSAL_JUDGE_FRESHNESS=no): no budget judged, so no time can fail this test.
      expect(drill.freshBudgetMs).toBeUndefined();
    }
    expect(record.checks.map((c) => c.name)).not.toContain('every drill fresh again within its budget');
    expect(record.crowd.errors).toBe(0);
    expect(record.samples.length).toBeGreaterThan(0);
    expect(record.latency.map((l) => l.consumer).sort()).toEqual([
      'confirmation-email',
      'sales-ledger',
      'seat-availability',
    ]);
    console.info(text);
    for (const drill of record.drills) expect(text).toContain(`      ok    ${drill.verdict.detail}\n`);
    expect(text).toContain(`  PASS: All ${record.checks.length} checks passed, 2 drills held\n`);
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain(`<h2>All ${record.checks.length} checks passed, 2 drills held</h2>`);

    // The killed Connect worker is back for whatever runs next, with the outbox connector running.
    expect((await stackStatus()).filter((c) => !c.healthy).map((c) => c.name)).toEqual([]);
    await waitFor(async () => isRunning(await connectorStatus(stack.connect, 'seat-outbox')), {
      timeoutMs: 60_000,
      intervalMs: 500,
      description: 'the outbox connector to be RUNNING after the rehearsal',
    });
  }, 300_000);
});
