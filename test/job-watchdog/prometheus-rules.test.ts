/**
 * The job and consumer alert rules: promtool checks and unit-tests them, and every metric they use
 * is one the programs export (so a renamed metric cannot silently switch an alert off).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RuntimeEvents } from '../../consumers/runtime/lifecycle.js';
import { registerConsumerMetrics } from '../../consumers/runtime/metrics.js';
import { JobWatchdogMetrics } from '../../monitors/job-watchdog/metrics.js';
import { parseJobWatchdogConfig } from '../../monitors/job-watchdog/settings.js';
import { registerSweeperMetrics } from '../../seat-service/sweeper-metrics.js';
import { projectRoot } from '../../stack/config.js';

const rulesDir = join(projectRoot, 'monitors', 'prometheus');

function promtool(args: string[]): { status: number | null; output: string } {
  const result = spawnSync('promtool', args, { cwd: rulesDir, encoding: 'utf8' });
  if (result.error)
    throw new Error(
      `promtool could not run (${result.error.message}); install it with: sudo apt-get install prometheus`,
    );
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

async function exportedNames(register: (registry: Registry) => void): Promise<Set<string>> {
  const registry = new Registry();
  register(registry);
  return new Set((await registry.getMetricsAsJSON()).map((metric) => metric.name));
}

/** Metric names in a rules file with the given prefix. */
function usedNames(file: string, prefix: string): string[] {
  const text = readFileSync(join(rulesDir, file), 'utf8');
  return [...new Set(text.match(new RegExp(`\\b${prefix}[a-z_]+`, 'g')) ?? [])];
}

/** Exported as such, or a histogram's _bucket/_sum/_count series. */
function unknownNames(used: readonly string[], exported: Set<string>): string[] {
  return used.filter((name) => !exported.has(name) && !exported.has(name.replace(/_(bucket|sum|count)$/, '')));
}

describe.each([
  ['job-alerts', ['job-alerts.test.yml', 'job-alerts-scrape-offset.test.yml']],
  ['consumer-alerts', ['consumer-alerts.test.yml']],
])('%s rules', (name, tests) => {
  it('pass promtool check rules and promtool test rules', () => {
    const check = promtool(['check', 'rules', `${name}.rules.yml`]);
    expect(check.status, check.output).toBe(0);
    for (const file of tests) {
      const test = promtool(['test', 'rules', file]);
      expect(test.output, test.output).toContain('SUCCESS');
      expect(test.status, `${file}: ${test.output}`).toBe(0);
    }
  });
});

describe('the rules use only metrics the programs export', () => {
  it("job rules: the watchdog's and the sweeper's metrics", async () => {
    const config = parseJobWatchdogConfig({ JOB_WATCHDOG_DATABASE_URL: 'postgres://w@127.0.0.1/seats' });
    const exported = await exportedNames((registry) => {
      new JobWatchdogMetrics(registry, config);
      registerSweeperMetrics(registry, 15_000);
    });
    const used = [
      ...usedNames('job-alerts.rules.yml', 'job_watchdog_'),
      ...usedNames('job-alerts.rules.yml', 'hold_sweeper_'),
    ];
    expect(unknownNames(used, exported)).toEqual([]);
    expect(used.length).toBeGreaterThan(7);
  });

  it("consumer rules: the consumer runtime's metrics", async () => {
    const exported = await exportedNames((registry) =>
      registerConsumerMetrics(registry, 'seat-availability', new RuntimeEvents(), 60_000),
    );
    const used = usedNames('consumer-alerts.rules.yml', 'consumer_');
    expect(unknownNames(used, exported)).toEqual([]);
    expect(used.length).toBe(8);
  });
});
