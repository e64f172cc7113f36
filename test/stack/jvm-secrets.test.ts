/**
 * Secrets on a stack JVM's command line or in its environment: a JVM started by launchJvm (a Kafka
 * console consumer of its own, waiting for a broker that is not there) inherits none of the
 * launcher's variables but the allowlisted ones, and holds its own; and no JVM of the running stack
 * has a password on its command line, which every local user can read in /proc/<pid>/cmdline (this
 * case passes once the stack runs this launcher: `stack start` restarts a registry started with its
 * password as a system property).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { distPaths } from '../../stack/artifacts.js';
import { stackLayout } from '../../stack/config.js';
import { jvmPidFile, launchJvm, stopJvm } from '../../stack/jvm.js';
import { stackComponents } from '../../stack/launcher.js';
import { commandLine, readPid } from '../../stack/processes.js';
import { requireStack } from '../support/stack.js';

requireStack();

const PLANTED = 'STAGEFRONT_PLANTED_SECRET';
const home = mkdtempSync(join(tmpdir(), 'jvm-secrets-'));
const shared = stackLayout();
const layout = stackLayout({ ...process.env, STACK_HOME: home, STACK_DIST: shared.dist });

afterAll(async () => {
  await stopJvm(readPid(jvmPidFile(layout, 'planted')), 10_000);
  rmSync(home, { recursive: true, force: true });
}, 30_000);

function environ(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

describe('a JVM started by launchJvm', () => {
  it("inherits none of the launcher's secrets, only the allowlisted variables and its own", async () => {
    process.env[PLANTED] = 'launcher-only-secret';
    try {
      launchJvm(layout, {
        name: 'planted',
        heapMb: 64,
        classpath: `${distPaths(layout).kafkaLibs}/*`,
        mainClass: 'org.apache.kafka.tools.consumer.ConsoleConsumer',
        args: ['--bootstrap-server', '127.0.0.1:28499', '--topic', 'nothing-here'],
        env: { STAGEFRONT_OWN_SETTING: 'its-own' },
      });
    } finally {
      delete process.env[PLANTED];
    }
    const pid = readPid(jvmPidFile(layout, 'planted'));
    expect(pid).toBeDefined();
    await waitFor(async () => commandLine(pid).includes('ConsoleConsumer'), {
      timeoutMs: 10_000,
      intervalMs: 100,
      description: 'the JVM running',
    });
    const env = environ(pid ?? 0);
    expect(env.has(PLANTED)).toBe(false);
    expect([...env.values()].join('\n')).not.toContain('launcher-only-secret');
    expect(env.get('STAGEFRONT_OWN_SETTING')).toBe('its-own');
    expect(env.get('PATH')).toBe(process.env.PATH);
  });
});

describe("the running stack's JVMs", () => {
  it('have no password on their command line', () => {
    const jvms = stackComponents(shared).filter((c) =>
      ['kafka', 'registry', 'connect'].some((name) => c.name.startsWith(name)),
    );
    // By the pid files (the stack's home may be reached through a symbolic link, so not c.pid()).
    const lines = jvms
      .map((c) => ({ name: c.name, line: commandLine(readPid(jvmPidFile(shared, c.name))) }))
      .filter((j) => j.line.includes('java'));
    expect(lines.map((j) => j.name)).toContain('registry');
    for (const { name, line } of lines) expect(line, name).not.toMatch(/password/i);
  });
});
