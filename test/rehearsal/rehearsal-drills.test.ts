/**
 * A small rehearsal with two fault drills, run the way a user runs it (npm run rehearsal -- --drill
 * consumer,connect) under the machine-wide rehearsal lock: one of its consumers and the stack's
 * Kafka Connect worker are killed with -9 during the crowd and started again. The verdicts are read
 * from the JSON record it writes. It kills a component of the stack the suite runs on, so it ends
 * only when every component answers again.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectorStatus, isRunning } from '../../connectors/connect-client.js';
import { waitFor } from '../../lib/wait.js';
import type { RehearsalRecord } from '../../rehearsal/record.js';
import { projectRoot } from '../../stack/config.js';
import { stackStatus, startStack } from '../../stack/launcher.js';
import { testLogger } from '../support/seat-pipeline.js';
import { requireStack, uniqueName } from '../support/stack.js';

const stack = requireStack();

const LOCK_FILE = join(tmpdir(), 'stagefront-rehearsal.lock');
const reportDir = mkdtempSync(join(tmpdir(), 'stagefront-rehearsal-drills-'));

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

afterAll(async () => {
  // Tests after this one need the whole stack: whatever the drills left down is started again.
  if ((await stackStatus()).some((c) => !c.healthy)) await startStack(testLogger);
  rmSync(reportDir, { recursive: true, force: true });
}, 300_000);

describe('a rehearsal with fault drills', () => {
  it('kills a consumer and Kafka Connect with -9 during the crowd, brings both back, and its record says nothing was lost, doubled or oversold', async () => {
    const show = uniqueName('drills').replace(/_/g, '-');
    const { code, output } = await run(
      'flock',
      [
        '--timeout',
        '120',
        LOCK_FILE,
        'npm',
        'run',
        '-s',
        'rehearsal',
        '--',
        '--show',
        show,
        '--drill',
        'consumer,connect',
      ],
      {
        REHEARSAL_BUYERS: '300',
        REHEARSAL_COUNTDOWN_MS: '0',
        REHEARSAL_DRILL_SPACING_MS: '10000',
        REHEARSAL_DRILL_DOWN_MS: '2000',
        REHEARSAL_REPORT_DIR: reportDir,
      },
    );
    const tail = output.split('\n').slice(-60).join('\n');
    expect(code, `npm run rehearsal exited ${code}; its output ends:\n${tail}`).toBe(0);

    const record = JSON.parse(readFileSync(join(reportDir, `rehearsal-${show}.json`), 'utf8')) as RehearsalRecord;
    expect(
      record.checks.filter((c) => !c.ok),
      tail,
    ).toEqual([]);
    const checkNames = record.checks.map((c) => c.name);
    for (const consumer of ['seat-availability', 'sales-ledger', 'confirmation-email'])
      expect(checkNames).toContain(`${consumer} handled every event once`);
    expect(checkNames).toContain('no seat sold twice');

    expect(record.drills.map((d) => d.target)).toEqual(['consumer', 'connect']);
    for (const drill of record.drills) {
      expect(drill.restartedAt, `${drill.target} restarted`).not.toBeNull();
      expect(drill.backAt, `${drill.target} back`).not.toBeNull();
      expect(drill.restartedAt ?? 0).toBeGreaterThan(drill.killedAt);
      expect(drill.backAt ?? 0).toBeGreaterThanOrEqual(drill.restartedAt ?? Infinity);
      expect(drill.caughtUpAt ?? null, `${drill.target}: the consumers caught up after it`).not.toBeNull();
      expect(drill.verdict.ok, drill.verdict.detail).toBe(true);
      // Killed during the crowd, not before it began.
      expect(drill.killedAt).toBeGreaterThanOrEqual(record.startedAt);
    }
    expect(record.crowd.errors).toBe(0);
    expect(record.samples.length).toBeGreaterThan(0);
    expect(record.latency.map((l) => l.consumer).sort()).toEqual([
      'confirmation-email',
      'sales-ledger',
      'seat-availability',
    ]);
    const text = join(reportDir, `rehearsal-${show}.txt`);
    expect(existsSync(text)).toBe(true);
    console.info(readFileSync(text, 'utf8'));
    expect(readFileSync(join(reportDir, `rehearsal-${show}.html`), 'utf8')).toMatch(/^<!doctype html>/i);

    // The killed Connect worker is back for whatever runs next, with the outbox connector running.
    expect((await stackStatus()).filter((c) => !c.healthy).map((c) => c.name)).toEqual([]);
    await waitFor(async () => isRunning(await connectorStatus(stack.connect, 'seat-outbox')), {
      timeoutMs: 60_000,
      intervalMs: 500,
      description: 'the outbox connector to be RUNNING after the rehearsal',
    });
  }, 300_000);
});
