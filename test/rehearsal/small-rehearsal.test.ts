/**
 * The small rehearsal of the suite's fast tier (test/suite-plan.ts): `npm run rehearsal` with a
 * small crowd and no drills, run the way a user runs it, under the machine-wide rehearsal lock. It
 * starts every program of the pipeline as a process on the Node of the run (the seat service,
 * the three consumers, the hold sweeper, the slot monitor, the job watchdog), so each Node the
 * suite covers runs the whole pipeline once. The exit code, the JSON, text and HTML reports are
 * checked, and the crowd's outcome is counted again from the seat database, Kafka read by the
 * test's own client and the consumers' inboxes and effect tables.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stackLayout } from '../../stack/config.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';
import { independentOutcome, stackSources, topicEnds } from './support/independent-outcome.js';
import { runRehearsal } from './support/run-rehearsal.js';

requireStack();

const reportDir = mkdtempSync(join(tmpdir(), 'stagefront-small-rehearsal-'));
afterAll(() => rmSync(reportDir, { recursive: true, force: true }));

describe('a small rehearsal without drills', () => {
  it('sells to a small crowd through the whole pipeline, exits 0, and its reports agree with the databases', async () => {
    const show = uniqueName('small').replace(/_/g, '-');
    const sources = stackSources(stackLayout());
    const from = await topicEnds(sources);
    const { record, tail, text, html } = await runRehearsal({
      show,
      lockTimeoutS: 240,
      env: {
        // Few buyers, few at once, and holds long enough for a loaded machine's confirm: the
        // rehearsal's sweeper still expires the abandoned ones while the crowd runs.
        REHEARSAL_BUYERS: '40',
        REHEARSAL_CONCURRENCY: '8',
        REHEARSAL_HOLD_TTL_MS: '8000',
        REHEARSAL_COUNTDOWN_MS: '0',
        REHEARSAL_DRILLS: '',
        REHEARSAL_STACK: 'native',
        REHEARSAL_REPORT_DIR: reportDir,
      },
    });

    expect(record.settings.drills).toEqual([]);
    expect(record.crowd.buyers).toBe(40);
    expect(record.crowd.errors).toBe(0);
    expect(record.checks.length).toBeGreaterThanOrEqual(7);
    expect(
      record.checks.filter((c) => !c.ok),
      tail,
    ).toEqual([]);

    // The crowd's outcome from the databases, not from the record: orders and sold seats in the
    // seat database, the same seats sold in the availability read model the consumer built.
    const { seatAdminUrl, consumerAdminUrl } = sources;
    const orders = await adminQuery(seatAdminUrl, 'select count(*)::int as n from orders where show_id = $1', [show]);
    const sold = await adminQuery(
      seatAdminUrl,
      `select count(*)::int as n from seats where show_id = $1 and state = 'sold'`,
      [show],
    );
    const model = await adminQuery(
      consumerAdminUrl,
      'select coalesce(sum(sold), 0)::int as n from seat_availability_sections where show_id = $1',
      [show],
    );
    const confirmed = (orders.rows[0] as { n: number }).n;
    expect(confirmed).toBeGreaterThan(0);
    expect(confirmed).toBe(record.crowd.confirmed);
    expect((model.rows[0] as { n: number }).n).toBe((sold.rows[0] as { n: number }).n);
    // Every event of the show on Kafka and handled by each consumer, nothing doubled on Kafka or in the effects.
    const outcome = await independentOutcome(show, sources, from);
    expect(outcome.problems).toEqual([]);
    expect(outcome.orders).toBe(confirmed);

    // The text report says the same, check by check; the HTML report is the whole page with its verdict.
    expect(text).toContain(`On-sale rehearsal of ${show} (native stack, no drills)`);
    expect(text).toMatch(new RegExp(`confirmed orders +${confirmed}\\n`));
    for (const check of record.checks) expect(text).toContain(`ok    ${check.name}: ${check.detail}`);
    expect(text).not.toContain('FAIL');
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain(`<h2>All ${record.checks.length} checks passed</h2>`);
  }, 300_000);
});
