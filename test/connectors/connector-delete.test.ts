/**
 * `npm run connector -- delete` removes the connector and its replication slot, and nothing
 * without --yes: it says what it would do (the connector, the slot, the WAL the slot retains) and
 * refuses, at once, with stdin closed. --keep-slot leaves the slot; a later delete drops it.
 */
import { describe, expect, it } from 'vitest';
import { connectorStatus } from '../../connectors/connect-client.js';
import { waitFor } from '../../lib/wait.js';
import { LOCAL_CONNECT_ENV, LOCAL_ROLE_PASSWORDS } from '../../stack/config.js';
import { runChildProgram } from '../consumers/helpers/child-consumer.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { startSeatPipeline } from '../support/seat-pipeline.js';
import { adminQuery, requireStack } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();

async function slotRow(adminUrl: string, slot: string): Promise<{ active: boolean } | undefined> {
  const { rows } = await adminQuery(adminUrl, 'select active from pg_replication_slots where slot_name = $1', [slot]);
  return rows[0] as { active: boolean } | undefined;
}

describe('connector delete', () => {
  it('refuses without --yes, then deletes the connector and drops its slot (or keeps it with --keep-slot)', async () => {
    const pipeline = await startSeatPipeline('conndelete');
    try {
      const { connectorName: name, slotName } = pipeline.connector;
      await waitFor(async () => (await slotRow(pipeline.adminUrl, slotName))?.active === true, {
        timeoutMs: 30_000,
        description: 'the connector streaming from its slot',
      });
      // The role the stack gives this command (REPLICATION, not a superuser).
      const debeziumUrl = pipeline.adminUrl.replace(
        'postgres:postgres@',
        `stagefront_debezium:${LOCAL_ROLE_PASSWORDS.debezium}@`,
      );
      const env = {
        CONNECT_URL: stack.connectUrl,
        ...LOCAL_CONNECT_ENV,
        CONNECTOR_NAME: name,
        SLOT_NAME: slotName,
        CONNECTOR_SEAT_DB_URL: debeziumUrl,
        LOG_LEVEL: 'warn',
      };
      const cli = (...args: string[]) => runChildProgram('connectors/cli.ts', env, ['delete', ...args]);

      const refused = await cli();
      expect(refused.code, refused.output).toBe(2);
      expect(refused.output).toContain(`connector ${name} (RUNNING)`);
      expect(refused.output).toMatch(
        new RegExp(
          `replication slot ${slotName} \\(wal_status reserved, active, pid \\d+\\) retains [\\d.]+ (B|kB|MB) of WAL`,
        ),
      );
      expect(refused.output).toContain(
        `will delete connector ${name}, then drop replication slot ${slotName} once the task has let go of it`,
      );
      expect(refused.output).toContain('Run it again with --yes');
      expect(await connectorStatus(stack.connect, name)).toBeDefined();
      expect(await slotRow(pipeline.adminUrl, slotName)).toBeDefined();

      const kept = await cli('--yes', '--keep-slot');
      expect(kept.code, kept.output).toBe(0);
      expect(kept.output).toContain(`deleted connector ${name}`);
      expect(kept.output).toContain(`--keep-slot: slot ${slotName} stays`);
      expect(await connectorStatus(stack.connect, name)).toBeUndefined();
      expect(await slotRow(pipeline.adminUrl, slotName)).toBeDefined();

      // The orphan slot: the same command, the connector already gone.
      const orphan = await cli();
      expect(orphan.code, orphan.output).toBe(2);
      expect(orphan.output).toContain(`connector ${name} does not exist in Connect`);
      expect(orphan.output).toContain(`will drop replication slot ${slotName}`);
      const dropped = await cli('--yes');
      expect(dropped.code, dropped.output).toBe(0);
      expect(dropped.output).toContain(`dropped replication slot ${slotName}`);
      expect(await slotRow(pipeline.adminUrl, slotName)).toBeUndefined();

      const nothing = await cli('--yes');
      expect(nothing.code, nothing.output).toBe(0);
      expect(nothing.output).toContain('nothing to do');
    } finally {
      await pipeline.teardown();
    }
  });
});
