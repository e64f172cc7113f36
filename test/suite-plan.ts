/**
 * Which Node runs which tests in `npm run -s test:all`. package.json supports Node 20, 22 and 24
 * (engines); users run 22 or 24 LTS, and the machine that runs CI has Node 20. Every supported
 * major runs, one after the other against the same stack, never two at once: tests start, stop
 * and kill stack processes. The newest LTS, Node 24, runs every test file; each other major runs
 * the fast tier only, on the started-with Node when it is that major, otherwise on its pin
 * (stack/node-runtime.ts installs it).
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { projectRoot, stackSettings } from '../stack/config.js';
import { NODE_PINS, nodeMajor, type NodePin } from '../stack/node-runtime.js';

/** The folders holding test files (vitest.config.ts includes `<folder>/**\/*.test.ts` of each). */
export const TEST_FOLDERS: readonly string[] = ['test', 'examples'];

/**
 * What `npm test` runs: the tests that need no stack, in seconds (the unit tests, the executor
 * tests and the examples' tests on a throwaway Postgres). package.json's `test` script is
 * `vitest run` with these (test/unit/node-runtime.test.ts checks it).
 */
export const STACK_FREE: readonly string[] = ['test/unit', 'examples'];

/**
 * How vitest runs every part (`npm test`, and both chains of test:all): in one module cache per
 * run (`--no-isolate`), so the project's imports are paid once, not once per file: a third of the
 * stack-free files' time, about a second for each stack-bound file. Each test file's own module
 * is still new; what the shared modules hold across files was checked (tracing resets on shutdown,
 * the metrics use registries of their own, a test that sets process.env restores it), and the leak
 * guard, shared now, fails a guarded file that starts with something an earlier file left running.
 */
export const VITEST_ARGS: readonly string[] = ['--no-isolate'];

/** Every test file of the project, as a path from the project root. */
export function projectTestFiles(folders: readonly string[] = TEST_FOLDERS): string[] {
  const under = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return under(path);
      return entry.name.endsWith('.test.ts') ? [relative(projectRoot, path)] : [];
    });
  return folders.flatMap((folder) => under(join(projectRoot, folder)));
}

/**
 * The fast tier (vitest globs from the project root): what each Node other than the newest runs.
 * The slow files (outages, kill -9, a lost slot, a failover, second stacks and clusters, the Java
 * reader, Postgres 17 replication) test how the pipeline behaves under faults, which the Node
 * version does not change; run three times they would take CI past its time budget. What does
 * change with Node is what these cover: the unit tests (settings parsing, the libraries' pure code,
 * the docs), every stack client (pg, kafkajs, the registry and Connect over fetch), the consumer
 * runtime's happy path with its metrics endpoint, and a small rehearsal, which starts every
 * program of the pipeline as a process (seat service, consumers, sweeper, monitors), sells
 * through Debezium and Kafka, and renders the text, JSON and HTML reports. (The HTML report's
 * charts are drawn by Chromium, not Node: test/rehearsal/html-report.test.ts runs on Node 24.)
 * A new test file belongs to the full run only unless it is added here. About 2 minutes on one
 * Node (docs/testing.md).
 */
export const FAST_TIER: readonly string[] = [
  'test/unit/**/*.test.ts',
  'examples/**/*.test.ts',
  'test/stack/components-answer.test.ts',
  'test/consumers/runtime-idempotency.test.ts',
  'test/rehearsal/small-rehearsal.test.ts',
];

/**
 * The checks test:all runs before the stack-free tests, each a command run with npx: the type
 * check, then what `npm run lint` runs, in its order (a unit test holds package.json to this).
 */
export const CHECKS: ReadonlyArray<readonly [name: string, command: readonly string[]]> = [
  ['typecheck', ['tsc', '--noEmit']],
  ['lint', ['eslint', '.']],
  ['format', ['prettier', '--check', '.']],
  ['unused code', ['knip']],
];

/**
 * What test:all sets for a stack it starts itself: Prometheus scraping and evaluating every 5 s
 * instead of the default 15 s, so that the alert tests wait for each rule's `for` rather than for
 * intervals (they read the interval from the running Prometheus; test/unit/alerts holds every rule
 * to the 15 s of the stack, compose and Kubernetes too). A setting the caller gave is kept.
 */
const SUITE_STACK_SETTINGS: Readonly<Record<string, string>> = {
  [stackSettings.settings.prometheusIntervalMs.env]: '5000',
};

/**
 * The settings to add to test:all's environment: SUITE_STACK_SETTINGS less those already set, and
 * none when the stack's Prometheus already runs (it keeps the interval it started with, which the
 * alert tests and the rehearsal's drill promises read from it).
 */
export function suiteStackEnv(env: NodeJS.ProcessEnv, prometheusRunning: boolean): Record<string, string> {
  if (prometheusRunning) return {};
  return Object.fromEntries(Object.entries(SUITE_STACK_SETTINGS).filter(([name]) => env[name] === undefined));
}

/** Set for every vitest run of test:all: the Node version that run is on (test/unit/suite-node.test.ts checks it). */
export const SUITE_NODE_ENV = 'STAGEFRONT_SUITE_NODE';

/**
 * `--node` of test:all: `all` (default) every supported major, `current` only the Node it was
 * started with, or one major only; a single Node runs every test file.
 */
export type NodeChoice = 'all' | 'current' | '20' | '22' | '24';

export const NODE_CHOICES: readonly NodeChoice[] = ['all', 'current', '20', '22', '24'];

export interface SuiteRun {
  /** undefined: the Node running test:all (process.execPath); a pin: that Node, installed on demand. */
  pin: NodePin | undefined;
  /** `full`: every test file; `fast`: FAST_TIER only. */
  tier: 'full' | 'fast';
}

/** The newest supported major, the one that runs everything. */
const NEWEST = NODE_PINS[NODE_PINS.length - 1]!;

/**
 * The runs for a choice, oldest Node first. `all`: each supported major once, the fast tier on
 * every major but the newest and the full suite on the newest (24); a major is run on the
 * started-with Node when that is the major, else on its pin. Started on another major (say 23),
 * that Node runs nothing: the supported ones are what the suite vouches for.
 */
export function suiteRuns(choice: NodeChoice, currentVersion: string = process.version): SuiteRun[] {
  const current = nodeMajor(currentVersion);
  const on = (pin: NodePin): NodePin | undefined => (nodeMajor(pin.version) === current ? undefined : pin);
  if (choice === 'current') return [{ pin: undefined, tier: 'full' }];
  if (choice === 'all') return NODE_PINS.map((pin) => ({ pin: on(pin), tier: pin === NEWEST ? 'full' : 'fast' }));
  const pin = NODE_PINS.find((p) => String(nodeMajor(p.version)) === choice);
  if (pin === undefined) throw new Error(`--node ${choice}: no pin for Node ${choice} in stack/node-runtime.ts`);
  return [{ pin: on(pin), tier: 'full' }];
}

/** Whether `file` (a path from the project root) matches `glob`: `**\/` any folders, `*` any part of a name. */
export function matchesGlob(file: string, glob: string): boolean {
  const source = glob
    .split('**/')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
    .join('(?:[^/]+/)*');
  return new RegExp(`^${source}$`).test(file);
}

/**
 * A run's files in two parts: the stack-free ones (STACK_FREE) run beside the stack-bound ones,
 * on the machine's second core, since they start, stop and kill nothing of the stack's.
 */
export type SuitePart = 'stack-free' | 'stack-bound';

/** Whether a test file (a path from the project root) needs no stack: it is under a STACK_FREE folder. */
export function isStackFree(file: string): boolean {
  return STACK_FREE.some((folder) => file.startsWith(`${folder}/`));
}

/** The test files a run (or one part of it) leaves out (vitest --exclude), from every test file of the project. */
export function excludedFiles(run: SuiteRun, testFiles: readonly string[], part?: SuitePart): string[] {
  return testFiles.filter(
    (file) =>
      (run.tier === 'fast' && !FAST_TIER.some((glob) => matchesGlob(file, glob))) ||
      (part === 'stack-free' && !isStackFree(file)) ||
      (part === 'stack-bound' && isStackFree(file)),
  );
}

const CHOICES_HELP =
  'all runs Node 20 and 22 on the fast tier and Node 24 on every test (test/suite-plan.ts), current only the started-with Node, 20, 22 or 24 only that Node; a single Node runs every test';

/** Splits test:all's arguments into `--node <choice>` and the rest, which go to vitest. */
export function parseSuiteArgs(args: readonly string[]): { node: NodeChoice; vitestArgs: string[] } {
  let node: NodeChoice = 'all';
  const vitestArgs: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    const inline = /^--node=(.*)$/.exec(arg);
    if (arg !== '--node' && !inline) {
      vitestArgs.push(arg);
      continue;
    }
    const value = inline ? inline[1] : args[(i += 1)];
    if (!NODE_CHOICES.includes(value as NodeChoice)) {
      throw new Error(`--node ${value ?? '(no value)'} is not one of ${NODE_CHOICES.join(', ')}: ${CHOICES_HELP}`);
    }
    node = value as NodeChoice;
  }
  return { node, vitestArgs };
}
