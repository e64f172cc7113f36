/**
 * Recovery: time to fresh per component, the single-instance stack beside the redundant one. Each
 * stack is one of the bench's own (its own home and ports, the shared downloads, small heaps),
 * started with `npm run stack`; on each, `npm run rehearsal` runs as a user runs it with every drill
 * (the redundant stack: the instance doing the work, and last the failover), and its JSON record is
 * read back: per drill, when the work resumed (a survivor took it over, or the victim answered
 * again), its time to fresh (from the kill until commit → seat availability stayed under 1 s), and
 * the run's checks (nothing lost, doubled or oversold, counted by the rehearsal's reconciliation
 * from the seat database and the inboxes). The smoke scale runs one consumer drill on the shared
 * stack only.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import type { DrillRecord, RehearsalRecord } from '../rehearsal/record.js';
import { projectRoot, stackLayout } from '../stack/config.js';
import { REDUNDANT_STACK, SINGLE_STACK, ownStack } from '../stack/own-stack.js';
import type { BenchContext, Scenario } from './context.js';

type Kind = 'single' | 'redundant';

const KIND_LABEL: Record<Kind, string> = { single: 'single-instance stack', redundant: 'redundant stack' };

/** The issue's targets for time to fresh, per drill: redundant stack, single-instance stack. */
const TARGETS: Record<string, { redundant?: string; single?: string; label: string }> = {
  connect: { label: 'Connect worker running the task', redundant: '≤ 10 s', single: '≤ 30 s' },
  kafka: { label: 'Kafka broker leading the busiest partition', redundant: '≤ 10 s', single: '≤ 30 s' },
  consumer: { label: 'consumer instance owning the busiest partition', redundant: '≤ 10 s', single: '≤ 20 s' },
  registry: { label: 'registry', redundant: 'no staleness', single: 'no staleness' },
  'seat-db': { label: 'seat database (restarted)', redundant: '≤ 15 s', single: '≤ 15 s' },
  failover: { label: 'seat database primary (failed over)', redundant: '≤ 15 s' },
  sweeper: { label: 'hold sweeper' },
};

const ALL_DRILLS = 'connect,kafka,registry,consumer,seat-db,sweeper';

/** The crowd per scale: its arrivals spread over (drills + 1) × the spacing. */
const CROWDS = {
  full: {
    REHEARSAL_BUYERS: '30000',
    REHEARSAL_CONCURRENCY: '64',
    REHEARSAL_SECTIONS: 'A:100x100:12900,B:100x100:8900,C:100x100:5900',
    REHEARSAL_DRILL_SPACING_MS: '25000',
  },
  small: { REHEARSAL_BUYERS: '3000', REHEARSAL_DRILL_SPACING_MS: '15000' },
  smoke: { REHEARSAL_BUYERS: '40', REHEARSAL_CONCURRENCY: '8', REHEARSAL_DRILL_SPACING_MS: '3000' },
} as const;

async function rehearse(env: NodeJS.ProcessEnv, reportDir: string): Promise<{ code: number; record: RehearsalRecord }> {
  const child = spawn('npm', ['run', '-s', 'rehearsal'], {
    cwd: projectRoot,
    env: { ...env, REHEARSAL_REPORT_DIR: reportDir },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (exit) => resolve(exit ?? 1));
  });
  const file = readdirSync(reportDir).find((f) => f.endsWith('.json'));
  if (file === undefined) throw new Error(`the rehearsal wrote no record (exit code ${code})`);
  return { code, record: JSON.parse(readFileSync(join(reportDir, file), 'utf8')) as RehearsalRecord };
}

/** Seconds from the kill: until fresh again, until the work resumed (a survivor took it, or the victim was back). */
function drillFigures(drill: DrillRecord): { freshS: number | null; resumedS: number | null } {
  // A drill with survivors resumes when one took the work over (never: null); one without, when its part was back.
  const resumedAt = drill.takenOverBy === undefined ? drill.backAt : drill.takenOverAt;
  return {
    freshS: drill.freshAt == null ? null : (drill.freshAt - drill.killedAt) / 1000,
    resumedS: resumedAt == null ? null : (resumedAt - drill.killedAt) / 1000,
  };
}

/** One rehearsal with `drills` on a stack of the bench's own (or, at the smoke scale, the shared one). */
async function runOn(ctx: BenchContext, kind: Kind, drills: string): Promise<RehearsalRecord> {
  const reportDir = mkdtempSync(join(tmpdir(), `stagefront-bench-recovery-${kind}-`));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...CROWDS[ctx.scale],
    REHEARSAL_COUNTDOWN_MS: '0',
    REHEARSAL_DRILLS: drills,
    REHEARSAL_CONSUMER_INSTANCES: kind === 'redundant' ? '2' : '1',
    // Correctness is the verdict here; freshness is what the bench measures.
    REHEARSAL_JUDGE_FRESHNESS: 'no',
  };
  try {
    if (ctx.scale === 'smoke') return (await rehearse({ ...env, ...ctx.kafkaEnv }, reportDir)).record;
    const stack = await ownStack(
      join(stackLayout().home, `bench-recovery-${kind}`),
      kind === 'redundant' ? REDUNDANT_STACK : SINGLE_STACK,
    );
    stack.command('stop'); // what an interrupted run may have left
    stack.remove();
    try {
      stack.command('start');
      return (await rehearse({ ...env, ...stack.env }, reportDir)).record;
    } finally {
      stack.command('stop');
      stack.remove();
    }
  } finally {
    keepReports(ctx, kind, reportDir);
    rmSync(reportDir, { recursive: true, force: true });
  }
}

/** The rehearsal's reports (text, JSON, HTML) kept under .stack/bench/, for finding where a drill's time went. */
function keepReports(ctx: BenchContext, kind: Kind, reportDir: string): void {
  if (!existsSync(reportDir) || readdirSync(reportDir).length === 0) return;
  const kept = join(projectRoot, '.stack', 'bench', `${ctx.runId}-recovery-${kind}`);
  mkdirSync(dirname(kept), { recursive: true });
  cpSync(reportDir, kept, { recursive: true });
  ctx.note(`recovery, ${KIND_LABEL[kind]}: the rehearsal's reports are kept in ${relative(projectRoot, kept)}`);
}

function problems(record: RehearsalRecord): string[] {
  return [
    ...record.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`),
    ...record.drills.filter((d) => !d.verdict.ok).map((d) => `drill ${d.target}: ${d.verdict.detail}`),
  ];
}

async function run(ctx: BenchContext): Promise<void> {
  const runs = new Map<Kind, RehearsalRecord>();
  if (ctx.scale === 'smoke') {
    runs.set('single', await runOn(ctx, 'single', 'consumer'));
  } else {
    runs.set('single', await runOn(ctx, 'single', ALL_DRILLS));
    runs.set('redundant', await runOn(ctx, 'redundant', `${ALL_DRILLS},failover`));
  }
  const byTarget = (kind: Kind, target: string) => runs.get(kind)?.drills.find((d) => d.target === target);
  for (const [target, { label, redundant: redundantTarget, single: singleTarget }] of Object.entries(TARGETS)) {
    const single = byTarget('single', target);
    const redundant = byTarget('redundant', target);
    if (single === undefined && redundant === undefined) continue;
    for (const [figure, words] of [
      ['freshS', 'time to fresh'],
      ['resumedS', 'work resumed (a survivor took it over, or it was back)'],
    ] as const) {
      const s = single === undefined ? null : drillFigures(single)[figure];
      const r = redundant === undefined ? null : drillFigures(redundant)[figure];
      const value = r ?? s;
      if (value === null) {
        ctx.note(
          figure === 'freshS'
            ? `recovery: ${label}: no time to fresh (no seat availability event reached it in the drill's window)`
            : `recovery: ${label}: the work never resumed (no survivor took it over, or the part never came back)`,
        );
        continue;
      }
      const targets = [
        r === null || redundantTarget === undefined ? null : `redundant ${redundantTarget}`,
        s === null || singleTarget === undefined ? null : `single ${singleTarget}`,
      ].filter((t) => t !== null);
      ctx.record({
        measure: `${label} killed -9: ${words}${r === null ? ` (${KIND_LABEL.single})` : s === null ? ` (${KIND_LABEL.redundant})` : ''}`,
        value,
        unit: 's',
        display: [r === null ? null : `redundant ${r.toFixed(1)} s`, s === null ? null : `single ${s.toFixed(1)} s`]
          .filter((part) => part !== null)
          .join(' · '),
        ...(r !== null && s !== null ? { baseline: { label: KIND_LABEL.single, value: s } } : {}),
        ...(figure === 'freshS' && targets.length > 0 ? { target: targets.join(' · ') } : {}),
      });
    }
  }
  for (const [kind, record] of runs) {
    const failed = problems(record);
    ctx.record({
      measure: `${KIND_LABEL[kind]}: checks or drills failed (lost, doubled, oversold, not taken over)`,
      value: failed.length,
      unit: '',
      display: String(failed.length),
      target: '0',
    });
    const endToEnd = record.stages.find(
      (stage) => stage.consumer === 'seat-availability' && stage.stage.startsWith('commit → effect'),
    );
    if (endToEnd !== undefined)
      ctx.record({
        measure: `${KIND_LABEL[kind]}: commit → seat availability over the whole run, drills included`,
        value: endToEnd.p99,
        unit: 'ms',
        display: `p50 ${endToEnd.p50} · p99 ${endToEnd.p99} · max ${endToEnd.max} ms (${endToEnd.count})`,
        ...(kind === 'redundant' ? { target: 'p99 ≤ 15 s' } : {}),
      });
    const published = record.samples.at(-1)?.published ?? 0;
    ctx.note(
      `recovery, ${KIND_LABEL[kind]}: ${record.crowd.buyers.toLocaleString('en-US')} buyers over ${record.crowd.seconds.toFixed(0)} s, ${published.toLocaleString('en-US')} events (${(published / Math.max(1, record.crowd.seconds)).toFixed(0)}/s on average), drills ${record.drills.map((d) => `${d.target} (${d.victim ?? d.target}${d.takenOverBy == null ? '' : ` → ${d.takenOverBy}`})`).join(', ')}; ${failed.length === 0 ? 'nothing lost, doubled or oversold' : `FAILED: ${failed.join('; ')}`}.`,
    );
  }
}

export const recoveryScenario: Scenario = {
  name: 'recovery',
  description:
    'each component killed with -9 during the crowd, on a single-instance and a redundant stack of the bench’s own: work resumed and time to fresh',
  run,
};
