/**
 * A program's announcement to the local stack's Prometheus (stack/scrape-targets.ts), in a stack
 * home of its own with a stand-in Prometheus process (its pid file and a command line naming its
 * configuration, as the launcher checks): the file Prometheus reads, the files of dead processes
 * and of reused pids cleared, nothing written without a running Prometheus or when switched off,
 * and the stack's generated configuration reading the folder.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prometheusConfig } from '../../../stack/prometheus-config.js';
import {
  SCRAPE_TARGETS_SWITCH,
  announceScrapeTarget,
  clearStaleTargets,
  prometheusFiles,
  scrapeTargetsDir,
  targetFile,
} from '../../../stack/scrape-targets.js';

const homes: string[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  }
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/** A stack home; with `prometheus`, a live process standing in for its Prometheus. */
async function stackHome(prometheus: boolean): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'scrape-targets-'));
  homes.push(home);
  mkdirSync(scrapeTargetsDir(home), { recursive: true });
  if (prometheus) {
    const { pidFile, configFile } = prometheusFiles(home);
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', configFile], { stdio: 'ignore' });
    children.push(child);
    await once(child, 'spawn');
    mkdirSync(dirname(pidFile), { recursive: true });
    writeFileSync(pidFile, String(child.pid));
  }
  return home;
}

/** /proc/<pid>/stat's start time, as the announcement names files. */
function startOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

/** A process id that is not running (above the kernel's largest). */
const DEAD_PID = 2 ** 22 + 7;
const options = { job: 'consumers', program: 'seat-heatmap', endpointUrl: 'http://127.0.0.1:9474' } as const;

describe('announcing a program to the local stack’s Prometheus', () => {
  it('writes the address alone; a listener on every interface or on localhost as 127.0.0.1', () => {
    expect(JSON.parse(targetFile('http://127.0.0.1:9474'))).toEqual([{ targets: ['127.0.0.1:9474'], labels: {} }]);
    expect(JSON.parse(targetFile('http://0.0.0.0:9475'))).toEqual([{ targets: ['127.0.0.1:9475'], labels: {} }]);
    expect(JSON.parse(targetFile('http://localhost:9476'))).toEqual([{ targets: ['127.0.0.1:9476'], labels: {} }]);
    expect(JSON.parse(targetFile('http://[::1]:9477'))).toEqual([{ targets: ['[::1]:9477'], labels: {} }]);
  });

  it("writes <job>/<program>-<pid>-<start>.json, clears a dead process's file and a reused pid's, keeps a live one's, and withdraws", async () => {
    const home = await stackHome(true);
    const folder = join(scrapeTargetsDir(home), 'consumers');
    mkdirSync(folder);
    const live = `sales-ledger-${process.ppid}-${startOf(process.ppid)}.json`;
    writeFileSync(join(folder, `seat-heatmap-${DEAD_PID}-123.json`), targetFile('http://127.0.0.1:9474'));
    writeFileSync(join(folder, `old-program-${process.ppid}-1.json`), targetFile('http://127.0.0.1:9480'));
    writeFileSync(join(folder, `torn-${DEAD_PID}-5.json.tmp`), '[{');
    writeFileSync(join(folder, live), targetFile('http://127.0.0.1:9472'));
    const announced = announceScrapeTarget({ ...options, env: { STACK_HOME: home } });
    const own = `seat-heatmap-${process.pid}-${startOf(process.pid)}.json`;
    expect(announced?.file).toBe(join(folder, own));
    expect(readdirSync(folder).sort()).toEqual([live, own].sort());
    expect(JSON.parse(readFileSync(join(folder, own), 'utf8'))).toEqual([{ targets: ['127.0.0.1:9474'], labels: {} }]);
    announced?.withdraw();
    expect(readdirSync(folder)).toEqual([live]);
  });

  it('writes nothing without a running Prometheus of that stack, or when switched off', async () => {
    const stopped = await stackHome(false);
    expect(announceScrapeTarget({ ...options, env: { STACK_HOME: stopped } })).toBeUndefined();
    expect(readdirSync(scrapeTargetsDir(stopped))).toEqual([]);
    const running = await stackHome(true);
    for (const off of ['no', 'false', '0', 'off'])
      expect(announceScrapeTarget({ ...options, env: { STACK_HOME: running, [SCRAPE_TARGETS_SWITCH]: off } })).toBe(
        undefined,
      );
    expect(readdirSync(scrapeTargetsDir(running))).toEqual([]);
    // Empty is unset: the default, yes.
    expect(
      announceScrapeTarget({ ...options, env: { STACK_HOME: running, [SCRAPE_TARGETS_SWITCH]: '' } }),
    ).toBeDefined();
  });

  it('a launch of Prometheus clears what killed programs left', () => {
    const folder = mkdtempSync(join(tmpdir(), 'scrape-targets-job-'));
    homes.push(folder);
    writeFileSync(join(folder, `x-${DEAD_PID}-9.json`), targetFile('http://127.0.0.1:9474'));
    writeFileSync(join(folder, 'notes.txt'), 'not a target file');
    clearStaleTargets(folder);
    expect(readdirSync(folder)).toEqual(['notes.txt']);
  });

  it("the stack's Prometheus reads each job's folder besides the default ports", () => {
    const config = JSON.parse(
      prometheusConfig({
        targetHost: '127.0.0.1',
        alertmanager: '127.0.0.1:18093',
        ruleFiles: [],
        scrapeInterval: '15s',
        evaluationInterval: '15s',
        targetsDir: '/stack/prometheus/targets',
      }),
    ) as { scrape_configs: { job_name: string; file_sd_configs?: { files: string[] }[] }[] };
    const consumers = config.scrape_configs.find((job) => job.job_name === 'consumers');
    expect(consumers?.file_sd_configs?.[0]?.files).toEqual(['/stack/prometheus/targets/consumers/*.json']);
    expect(
      config.scrape_configs.every((job) => job.file_sd_configs?.[0]?.files[0]?.includes(`/${job.job_name}/`)),
    ).toBe(true);
  });
});
