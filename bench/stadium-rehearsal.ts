/**
 * The stadium crowd: `npm run rehearsal` as a user runs it (a child process, the whole pipeline
 * as separate programs on the running stack) with 20,000 buyers, 64 at a time, on three 4,000-seat
 * sections (small: the default 2,500 buyers), read back from the run's JSON record: commit → seat
 * availability, and the stage that takes the time; commit → email accepted.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RehearsalRecord } from '../rehearsal/record.js';
import { projectRoot } from '../stack/config.js';
import type { BenchContext, Scenario } from './context.js';

/** The figure this crowd was at before the performance work (commit → seat availability p99), measured on the same machine. */
const BEFORE_P99_MS = 2_183;
/** Commit → email p99 for this crowd before the email work (4 sends in flight, an instant local sink), same machine. */
const EMAIL_BEFORE_P99_MS = 11_700;

const CROWDS = {
  full: {
    REHEARSAL_BUYERS: '20000',
    REHEARSAL_CONCURRENCY: '64',
    REHEARSAL_SECTIONS: 'A:80x50:12900,B:80x50:8900,C:80x50:5900',
  },
  small: {},
  smoke: { REHEARSAL_BUYERS: '40', REHEARSAL_CONCURRENCY: '8', REHEARSAL_COUNTDOWN_MS: '0' },
} as const;

async function rehearse(env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn('npm', ['run', '-s', 'rehearsal'], {
    cwd: projectRoot,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

async function run(ctx: BenchContext): Promise<void> {
  const reportDir = mkdtempSync(join(tmpdir(), 'stagefront-bench-rehearsal-'));
  try {
    const crowd = CROWDS[ctx.scale];
    const code = await rehearse({ ...process.env, ...ctx.kafkaEnv, ...crowd, REHEARSAL_REPORT_DIR: reportDir });
    const file = readdirSync(reportDir).find((f) => f.endsWith('.json'));
    if (file === undefined) throw new Error(`the rehearsal wrote no record (exit code ${code})`);
    const record = JSON.parse(readFileSync(join(reportDir, file), 'utf8')) as RehearsalRecord;
    const buyers = record.crowd.buyers.toLocaleString('en-US');
    const seats = record.stages.filter((s) => s.consumer === 'seat-availability');
    const endToEnd = seats.find((s) => s.stage.startsWith('commit → effect'));
    if (endToEnd === undefined) throw new Error('the rehearsal record has no seat availability latency');
    ctx.record({
      measure: `${buyers}-buyer rehearsal: commit → seat availability`,
      value: endToEnd.p99,
      unit: 'ms',
      display: `p50 ${endToEnd.p50} · p99 ${endToEnd.p99} · max ${endToEnd.max} ms (${endToEnd.count})`,
      ...(ctx.scale === 'full'
        ? { baseline: { label: 'before this work, same crowd', value: BEFORE_P99_MS }, target: 'p99 ≤ 500 ms' }
        : {}),
    });
    for (const stage of seats.filter((s) => s !== endToEnd)) {
      ctx.record({
        measure: `${buyers}-buyer rehearsal, seat availability: ${stage.stage}`,
        value: stage.p99,
        unit: 'ms',
        display: `p50 ${stage.p50} · p99 ${stage.p99} · max ${stage.max} ms (${stage.count})`,
      });
    }
    const email = record.stages.find(
      (s) => s.consumer === 'confirmation-email' && s.stage.startsWith('commit → effect'),
    );
    for (const stage of record.stages.filter((s) => s.consumer === 'confirmation-email' && s !== email))
      ctx.record({
        measure: `${buyers}-buyer rehearsal, confirmation email: ${stage.stage}`,
        value: stage.p99,
        unit: 'ms',
        display: `p50 ${stage.p50} · p99 ${stage.p99} · max ${stage.max} ms (${stage.count})`,
      });
    if (email !== undefined)
      ctx.record({
        measure: `${buyers}-buyer rehearsal: commit → email accepted (provider at 100 ms a message)`,
        value: email.p99,
        unit: 'ms',
        display: `p50 ${email.p50} · p99 ${email.p99} · max ${email.max} ms (${email.count})`,
        ...(ctx.scale === 'full'
          ? {
              baseline: { label: 'before the email work, same crowd (instant sink)', value: EMAIL_BEFORE_P99_MS },
              target: 'p99 ≤ 2 s',
            }
          : {}),
      });
    const failed = record.checks.filter((c) => !c.ok).map((c) => c.name);
    ctx.note(
      `rehearsal: ${buyers} buyers in ${record.crowd.seconds.toFixed(1)} s, ${record.crowd.confirmed.toLocaleString('en-US')} orders; its checks: ${failed.length === 0 ? 'all ok' : `FAILED ${failed.join(', ')}`}. Commit is the outbox row's created_at (the writing transaction's start); the seat availability effect is the inbox row's received_at (its transaction). Its baseline is the figure measured before the performance work (the old code is gone, so it cannot run side by side).`,
    );
    if (code !== 0)
      throw new Error(`the rehearsal exited with ${code}; its checks: ${failed.join(', ') || 'none failed'}`);
  } finally {
    rmSync(reportDir, { recursive: true, force: true });
  }
}

export const stadiumRehearsalScenario: Scenario = {
  name: 'rehearsal',
  description: 'the 20,000-buyer rehearsal (small: 2,500) as a user runs it, commit → seat availability per stage',
  run,
};
