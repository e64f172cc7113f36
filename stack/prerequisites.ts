import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { javaRuntime } from './java-runtime.js';

/** What the native stack needs from the machine, and how to get each. */
interface Prerequisite {
  name: string;
  present: () => boolean;
  aptPackages: string[];
  install: string;
}

const PREREQUISITES: Prerequisite[] = [
  {
    name: 'Java 17 or newer',
    present: () => javaMajorVersion() >= 17,
    aptPackages: ['openjdk-17-jre-headless'],
    install: 'sudo apt-get install openjdk-17-jre-headless (macOS: brew install openjdk@17)',
  },
  {
    name: 'Java 21 or newer for Apicurio Registry 3.3 (its classes need 21; the rest of the stack runs on 17)',
    present: () => registryJavaCommand() !== undefined,
    aptPackages: ['openjdk-21-jre-headless'],
    install:
      'install any JDK 21+ (e.g. sudo apt-get install openjdk-21-jre-headless on Debian 13 / Ubuntu 24.04, or Temurin 21) ' +
      'and point STACK_REGISTRY_JAVA_HOME at it if it is not under /usr/lib/jvm',
  },
  {
    name: 'Maven',
    present: () => commandWorks('mvn', ['-v']),
    aptPackages: ['maven'],
    install: 'sudo apt-get install maven (macOS: brew install maven)',
  },
  {
    name: 'Postgres 15 or newer server binaries (initdb, pg_ctl)',
    present: () => postgresBinDir() !== undefined,
    aptPackages: ['postgresql'],
    install: 'sudo apt-get install postgresql (macOS: brew install postgresql@15)',
  },
  {
    name: "Alertmanager (receives the slot monitor's alerts)",
    present: () => ['prometheus-alertmanager', 'alertmanager'].some((binary) => commandWorks(binary, ['--version'])),
    aptPackages: ['prometheus-alertmanager'],
    install: 'sudo apt-get install prometheus-alertmanager (macOS: brew install alertmanager)',
  },
  {
    name: "Prometheus and promtool (the stack's Prometheus; tests of the alert rules)",
    present: () => commandWorks('prometheus', ['--version']) && commandWorks('promtool', ['--version']),
    aptPackages: ['prometheus'],
    install: 'sudo apt-get install prometheus (macOS: brew install prometheus)',
  },
];

/** What the tests need beyond the stack: nothing that runs the pipeline needs these. */
const TEST_PREREQUISITES: Prerequisite[] = [
  {
    name: 'Chromium (the HTML report test opens the rehearsal report in it)',
    present: () =>
      (process.env.CHROMIUM_PATH
        ? [process.env.CHROMIUM_PATH]
        : ['chromium', 'chromium-browser', 'google-chrome']
      ).some((binary) => commandWorks(binary, ['--version'])),
    aptPackages: ['chromium'],
    install: 'sudo apt-get install chromium, or set CHROMIUM_PATH to a Chromium or Chrome binary',
  },
];

/**
 * Checks Java, Maven and the Postgres binaries (and, `forTests`, what the tests need too). As
 * root with apt-get (CI, a fresh Debian box) it installs what is missing; anywhere else it fails
 * with one message naming each missing piece, how to install it, and the Docker alternative.
 */
export function ensurePrerequisites(logger: Logger, options: { installMissing: boolean; forTests?: boolean }): void {
  const wanted = options.forTests === true ? [...PREREQUISITES, ...TEST_PREREQUISITES] : PREREQUISITES;
  let missing = wanted.filter((p) => !p.present());
  if (missing.length === 0) return;
  if (options.installMissing && process.getuid?.() === 0 && commandWorks('apt-get', ['--version'])) {
    const packages = missing.flatMap((p) => p.aptPackages);
    logger.info({ packages }, 'installing missing prerequisites with apt-get');
    aptGet(['update']);
    aptGet(['install', '-y', '--no-install-recommends', ...packages]);
    missing = wanted.filter((p) => !p.present());
  }
  if (missing.length === 0) return;
  const lines = missing.map((p) => `  - ${p.name}: ${p.install}`);
  throw new Error(
    `The native stack needs software this machine lacks:\n${lines.join('\n')}\n` +
      'Install it and run the command again, or run the same stack with Docker: docker compose up',
  );
}

export function aptGet(args: string[]): void {
  const result = spawnSync('apt-get', args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed with exit code ${result.status}`);
}

export function commandWorks(command: string, args: string[]): boolean {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  return result.status === 0;
}

function javaMajorVersion(java = 'java'): number {
  return javaRuntime(java)?.major ?? 0;
}

/** The newest installed Postgres (15+) server bin directory, e.g. /usr/lib/postgresql/15/bin. */
export function postgresBinDir(): string | undefined {
  const fromPath = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const candidates: string[] = [];
  const debianRoot = '/usr/lib/postgresql';
  if (existsSync(debianRoot)) {
    const majors = readdirSync(debianRoot)
      .map(Number)
      .filter((v) => v >= 15)
      .sort((a, b) => b - a);
    candidates.push(...majors.map((v) => join(debianRoot, String(v), 'bin')));
  }
  if (fromPath.status === 0) candidates.push(fromPath.stdout.trim());
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}

/**
 * A `java` command of version 21 or newer for Apicurio Registry: STACK_REGISTRY_JAVA_HOME, the
 * default java, or the newest JDK under /usr/lib/jvm.
 */
export function registryJavaCommand(): string | undefined {
  const candidates: string[] = [];
  const configured = process.env.STACK_REGISTRY_JAVA_HOME;
  if (configured) candidates.push(join(configured, 'bin', 'java'));
  candidates.push('java');
  const jvmRoot = '/usr/lib/jvm';
  if (existsSync(jvmRoot)) {
    candidates.push(
      ...readdirSync(jvmRoot)
        .map((dir) => join(jvmRoot, dir, 'bin', 'java'))
        .filter((path) => existsSync(path)),
    );
  }
  const usable = candidates
    .map((java) => ({ java, major: javaMajorVersion(java) }))
    .filter((c) => c.major >= 21)
    .sort((a, b) => b.major - a.major);
  return configured && usable[0]
    ? (usable.find((c) => c.java.startsWith(configured))?.java ?? usable[0].java)
    : usable[0]?.java;
}
