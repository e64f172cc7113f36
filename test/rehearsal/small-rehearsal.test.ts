/**
 * The small rehearsal of the suite's fast tier (test/suite-plan.ts): `npm run rehearsal` with a
 * small crowd and no drills, run the way a user runs it, under the machine-wide rehearsal lock. It
 * starts every program of the pipeline as a process on the Node of the run (the seat service,
 * the three consumers, the hold sweeper, the slot monitor, the job watchdog), so each Node the
 * suite covers runs the whole pipeline once. The exit code, the JSON, text and HTML reports are
 * checked, and the crowd's outcome is counted again from the seat and consumer databases.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSettings } from '../../lib/settings.js';
import type { RehearsalRecord } from '../../rehearsal/record.js';
import { seatServiceSettings } from '../../seat-service/settings.js';
import { localStackProgramEnv, projectRoot, stackLayout } from '../../stack/config.js';
import { REHEARSAL_LOCK_FILE } from '../dashboards/rehearsal-run.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';

requireStack();

const reportDir = mkdtempSync(join(tmpdir(), 'stagefront-small-rehearsal-'));
afterAll(() => rmSync(reportDir, { recursive: true, force: true }));

/** Runs a command to its end; its exit code and output (stdout and stderr together). */
function run(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: projectRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('a small rehearsal without drills', () => {
  it('sells to a small crowd through the whole pipeline, exits 0, and its reports agree with the databases', async () => {
    const show = uniqueName('small').replace(/_/g, '-');
    const { code, output } = await run(
      'flock',
      ['--timeout', '240', REHEARSAL_LOCK_FILE, 'npm', 'run', '-s', 'rehearsal', '--', '--show', show],
      {
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
    );
    const tail = output.split('\n').slice(-40).join('\n');
    expect(code, `npm run rehearsal exited ${code}; its output ends:\n${tail}`).toBe(0);

    const record = JSON.parse(readFileSync(join(reportDir, `rehearsal-${show}.json`), 'utf8')) as RehearsalRecord;
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
    const seatAdminUrl = parseSettings(seatServiceSettings, {
      ...process.env,
      ...localStackProgramEnv(stackLayout()),
    }).adminDatabaseUrl;
    const consumerAdminUrl = seatAdminUrl.replace(/\/[^/]+$/, '/stagefront_consumers');
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

    // The text report says the same, check by check; the HTML report is the whole page with its verdict.
    const text = readFileSync(join(reportDir, `rehearsal-${show}.txt`), 'utf8');
    expect(text).toContain(`On-sale rehearsal of ${show} (native stack, no drills)`);
    expect(text).toMatch(new RegExp(`confirmed orders +${confirmed}\\n`));
    for (const check of record.checks) expect(text).toContain(`ok    ${check.name}: ${check.detail}`);
    expect(text).not.toContain('FAIL');
    const html = readFileSync(join(reportDir, `rehearsal-${show}.html`), 'utf8');
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain(`<h2>All ${record.checks.length} checks passed</h2>`);
  }, 300_000);
});
