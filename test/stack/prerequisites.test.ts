import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot, stackSettings } from '../../stack/config.js';
import { freePort } from '../slot-monitor/support/alertmanager-process.js';

describe('a machine without the prerequisites', () => {
  it('gets one message naming what is missing, how to install it, and docker compose as the alternative', async () => {
    // A PATH with node only (no java, no mvn), and no installing (as on a user's machine).
    const bin = mkdtempSync(join(tmpdir(), 'stagefront-path-'));
    try {
      symlinkSync(process.execPath, join(bin, 'node'));
      // Ports nothing answers on: a stack that already runs as configured (the suite's, on the
      // default ports) would be reused without looking for anything.
      const ports: Record<string, string> = {};
      for (const setting of Object.values(stackSettings.settings))
        if (setting.env.endsWith('_PORT')) ports[setting.env] = String(await freePort());
      const result = spawnSync(join(bin, 'node'), ['--import', 'tsx', 'stack/cli.ts', 'start'], {
        cwd: projectRoot,
        env: { PATH: bin, HOME: tmpdir(), STACK_HOME: join(bin, 'stack'), STACK_INSTALL_MISSING: 'no', ...ports },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('The native stack needs software this machine lacks');
      expect(result.stderr).toMatch(/Java 17 or newer: .*apt-get install openjdk-17-jre-headless/);
      expect(result.stderr).toMatch(/Maven: .*apt-get install maven/);
      expect(result.stderr).toContain('docker compose up');
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  }, 90_000);
});
