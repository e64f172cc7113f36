/**
 * The Prometheus alert rules for people who scrape: promtool (Debian's prometheus package) checks
 * and unit-tests them, and every slot_monitor_* metric they use is one the monitor exports.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SlotMonitorMetrics } from '../../monitors/slot-monitor/metrics.js';
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

describe('Prometheus rules of the slot monitor', () => {
  it('pass promtool check rules', () => {
    const run = promtool(['check', 'rules', 'slot-alerts.rules.yml']);
    expect(run.output).toContain('SUCCESS');
    expect(run.status).toBe(0);
  });

  it('pass promtool test rules', () => {
    const run = promtool(['test', 'rules', 'slot-alerts.test.yml']);
    expect(run.output, run.output).toContain('SUCCESS');
    expect(run.status).toBe(0);
  });

  it('use only metrics the monitor exports', async () => {
    const registry = new Registry();
    new SlotMonitorMetrics(registry, 1024, 256);
    const exported = new Set((await registry.getMetricsAsJSON()).map((metric) => metric.name));
    const used = new Set(readFileSync(join(rulesDir, 'slot-alerts.rules.yml'), 'utf8').match(/slot_monitor_[a-z_]+/g));
    expect([...used].filter((name) => !exported.has(name))).toEqual([]);
    expect(used.size).toBeGreaterThan(5);
  });
});
