/**
 * The bench at its smoke scale, as a user runs it (`BENCH_SCALE=smoke npm run -s bench`): every
 * scenario runs its code once against the stack, the run exits 0, and the report it writes holds
 * figures from each scenario and no failure. Nothing is judged about speed (that lives in
 * `npm run bench`, never in a test): this keeps the bench from rotting between measurements.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Report } from '../../bench/report.js';
import { SCENARIOS } from '../../bench/scenarios.js';
import { projectRoot } from '../../stack/config.js';
import { requireStack } from '../support/stack.js';

requireStack();

/** How long the whole smoke run may take; the test's own timeout is a minute longer. */
const BENCH_DEADLINE_MS = 840_000;

/** The bench runs still going: each leads a process group (the bench and what it started). */
const groups = new Set<number>();

function killGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // the group is gone already
  }
}

/**
 * A run still going when the file ends or its worker exits is killed with all it started: a run cut
 * short by vitest (a timeout, Ctrl-C, which a group of its own does not receive).
 */
const killAll = () => {
  for (const group of groups) killGroup(group, 'SIGKILL');
};
afterAll(killAll);
process.once('exit', killAll);

/**
 * Runs `npm run bench` in a process group of its own. Past the deadline the group is sent SIGTERM,
 * then SIGKILL, and the run fails naming the deadline with the tail of its output.
 */
function runBench(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('npm', ['run', '-s', 'bench'], {
    cwd: projectRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const group = child.pid;
  if (group !== undefined) groups.add(group);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let overdue = false;
  const deadline = setTimeout(() => {
    if (group === undefined) return;
    overdue = true;
    killGroup(group, 'SIGTERM');
    setTimeout(() => {
      if (groups.has(group)) killGroup(group, 'SIGKILL');
    }, 10_000).unref();
  }, BENCH_DEADLINE_MS);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(deadline);
      // What the bench left running goes with it (the stack's own processes are detached from it).
      if (group !== undefined) {
        killGroup(group, 'SIGKILL');
        groups.delete(group);
      }
      if (!overdue) return resolve({ code, stdout, stderr });
      const tail = `${stdout.slice(-3000)}\n${stderr.slice(-3000)}`;
      reject(new Error(`the bench ran past ${BENCH_DEADLINE_MS / 1000} s and was stopped; its output ended:\n${tail}`));
    });
  });
}

describe('npm run bench at the smoke scale', () => {
  it(
    'runs every scenario, exits 0, and writes a report with figures from each and no failure',
    async () => {
      const { code, stdout, stderr } = await runBench({ ...process.env, BENCH_SCALE: 'smoke' });
      const tail = `${stdout.slice(-3000)}\n${stderr.slice(-3000)}`;
      expect(code, tail).toBe(0);
      const file = /^figures written to (.+)$/m.exec(stdout)?.[1];
      expect(file, tail).toBeDefined();
      const report = JSON.parse(readFileSync(file!, 'utf8')) as Report;
      expect(report.scale).toBe('smoke');
      expect(report.notes.filter((note) => / failed: /.test(note))).toEqual([]);
      const measured = new Set(report.figures.map((figure) => figure.scenario));
      expect([...measured].sort()).toEqual(SCENARIOS.map((s) => s.name).sort());
      for (const figure of report.figures) expect(Number.isFinite(figure.value), figure.measure).toBe(true);
    },
    BENCH_DEADLINE_MS + 60_000,
  );

  it('refuses a scale it does not know, naming the ones it does', async () => {
    const { code, stderr } = await runBench({ ...process.env, BENCH_SCALE: 'huge' });
    expect(code).toBe(2);
    expect(stderr).toMatch(/BENCH_SCALE.*smoke.*small.*full/s);
  });
});
