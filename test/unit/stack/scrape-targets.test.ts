/**
 * A program's announcement to the local stack's Prometheus (stack/scrape-targets.ts), in a stack
 * home of its own: the file Prometheus reads, the files of dead processes cleared, nothing written
 * without a stack or when switched off, and the stack's generated configuration reading the folder.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prometheusConfig } from '../../../stack/prometheus-config.js';
import {
  SCRAPE_TARGETS_SWITCH,
  announceScrapeTarget,
  scrapeTargetsDir,
  targetFile,
} from '../../../stack/scrape-targets.js';

const homes: string[] = [];
function stackHome(withTargets = true): string {
  const home = mkdtempSync(join(tmpdir(), 'scrape-targets-'));
  homes.push(home);
  if (withTargets) mkdirSync(scrapeTargetsDir(home), { recursive: true });
  return home;
}
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/** A process id that is not running: a child that has exited is reaped, its id free. */
const DEAD_PID = 2 ** 22 + 7;

describe('announcing a program to the local stack’s Prometheus', () => {
  it('writes the address alone, an all-interfaces listener as loopback', () => {
    expect(JSON.parse(targetFile('http://127.0.0.1:9474'))).toEqual([{ targets: ['127.0.0.1:9474'], labels: {} }]);
    expect(JSON.parse(targetFile('http://0.0.0.0:9475'))).toEqual([{ targets: ['127.0.0.1:9475'], labels: {} }]);
    expect(JSON.parse(targetFile('http://[::1]:9476'))).toEqual([{ targets: ['[::1]:9476'], labels: {} }]);
  });

  it("writes <job>/<program>-<pid>.json, clears a dead process's file and leaves a live one's, and withdraws", () => {
    const home = stackHome();
    const folder = join(scrapeTargetsDir(home), 'consumers');
    mkdirSync(folder);
    writeFileSync(join(folder, `seat-heatmap-${DEAD_PID}.json`), targetFile('http://127.0.0.1:9474'));
    writeFileSync(join(folder, `sales-ledger-${process.ppid}.json`), targetFile('http://127.0.0.1:9472'));
    const announced = announceScrapeTarget({
      job: 'consumers',
      program: 'seat-heatmap',
      endpointUrl: 'http://127.0.0.1:9474',
      env: { STACK_HOME: home },
    });
    expect(announced?.file).toBe(join(folder, `seat-heatmap-${process.pid}.json`));
    expect(readdirSync(folder).sort()).toEqual(
      [`sales-ledger-${process.ppid}.json`, `seat-heatmap-${process.pid}.json`].sort(),
    );
    expect(JSON.parse(readFileSync(announced?.file ?? '', 'utf8'))).toEqual([
      { targets: ['127.0.0.1:9474'], labels: {} },
    ]);
    announced?.withdraw();
    expect(readdirSync(folder)).toEqual([`sales-ledger-${process.ppid}.json`]);
  });

  it('writes nothing without a local stack (no targets folder) or when switched off', () => {
    const bare = stackHome(false);
    const options = { job: 'consumers', program: 'x', endpointUrl: 'http://127.0.0.1:9474' } as const;
    expect(announceScrapeTarget({ ...options, env: { STACK_HOME: bare } })).toBeUndefined();
    expect(existsSync(scrapeTargetsDir(bare))).toBe(false);
    const home = stackHome();
    expect(announceScrapeTarget({ ...options, env: { STACK_HOME: home, [SCRAPE_TARGETS_SWITCH]: 'no' } })).toBe(
      undefined,
    );
    expect(readdirSync(scrapeTargetsDir(home))).toEqual([]);
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
