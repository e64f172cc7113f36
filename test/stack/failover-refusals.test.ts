/**
 * `npm run stack -- failover` where it must refuse, on the shared stack: with no standby, and with
 * a standby that does not answer, even with --stop-primary (the switchover flag never stops a
 * primary when there is nothing to promote). Each row's exit code and sentence, and the primary
 * afterwards: still answering as a primary, and not marked failed-over. The promotion itself, and
 * the refusal while the primary answers, need a standby and run on a pair of their own
 * (test/failover/primary-failover.test.ts); they are not run here, where other tests share the
 * primary.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stackLayout } from '../../stack/config.js';
import { FAILED_OVER_MARKER, postgresHome } from '../../stack/postgres.js';
import { runChildProgram } from '../consumers/helpers/child-consumer.js';
import { adminQuery, requireStack } from '../support/stack.js';

const stack = requireStack();

/** A loopback port nothing listens on (bound, then let go). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Row {
  name: string;
  args: string[];
  env: () => Promise<Record<string, string>>;
  exit: number;
  says: RegExp;
}

const ROWS: Row[] = [
  {
    name: 'no standby (STACK_POSTGRES_STANDBY=no), --stop-primary: exit 1, what to do instead',
    args: ['failover', '--stop-primary'],
    env: async () => ({ STACK_POSTGRES_STANDBY: 'no' }),
    exit: 1,
    says: /STACK_POSTGRES_STANDBY is no: this stack has no standby to promote \(.*npm run slot-recovery\)/,
  },
  {
    name: 'a standby that does not answer, --stop-primary: exit 1, the port and how to start it',
    args: ['failover', '--stop-primary'],
    env: async () => ({ STACK_POSTGRES_STANDBY: 'yes', STACK_POSTGRES_STANDBY_PORT: String(await freePort()) }),
    exit: 1,
    says: /the standby on port \d+ does not answer; start it \(npm run stack -- start\) or read its log /,
  },
  {
    name: 'an unknown stack command: exit 2 and the usage',
    args: ['fail-over'],
    env: async () => ({}),
    exit: 2,
    says: /unknown command "fail-over"[\s\S]*Usage: npm run stack -- <start\|stop\|status\|supervise\|env\|failover>/,
  },
];

describe('npm run stack -- failover: the refusals', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const run = await runChildProgram('stack/cli.ts', { ...(await row.env()), LOG_LEVEL: 'warn' }, row.args);
      expect(run.code, run.output).toBe(row.exit);
      expect(run.output).toMatch(row.says);
      const { rows } = await adminQuery(stack.postgresAdminUrl, 'select pg_is_in_recovery() as recovering');
      expect(rows).toEqual([{ recovering: false }]);
      expect(existsSync(join(postgresHome(stackLayout()), FAILED_OVER_MARKER))).toBe(false);
    });
  }

  it('while a supervisor keeps the stack running: exit 1, its pid and how to stop it; nothing touched', async () => {
    // This test process stands in for `npm run stack -- supervise`: alive, and not the command's own pid.
    const layout = stackLayout();
    const pidFile = join(layout.runDir, 'supervisor.pid');
    writeFileSync(pidFile, String(process.pid));
    try {
      const run = await runChildProgram('stack/cli.ts', { LOG_LEVEL: 'warn' }, ['failover', '--stop-primary']);
      expect(run.code, run.output).toBe(1);
      expect(run.output).toContain(`a supervisor keeps this stack running (pid ${process.pid}`);
      expect(run.output).toContain(`stop it first (Ctrl-C in its terminal, or kill ${process.pid})`);
    } finally {
      rmSync(pidFile, { force: true });
    }
    const { rows } = await adminQuery(stack.postgresAdminUrl, 'select pg_is_in_recovery() as recovering');
    expect(rows).toEqual([{ recovering: false }]);
    expect(existsSync(join(postgresHome(layout), FAILED_OVER_MARKER))).toBe(false);
  });
});
