/**
 * `npm run slot-recovery` where there is nothing to recover or it cannot: Connect down, a connector
 * that does not exist, bad arguments, and a slot that is not lost (a dry run and an --apply). Each
 * row's exit code and sentence (naming the fix), and the state afterwards read from Connect's REST
 * API and the seat database: the connector still RUNNING on the same slot, still active, and no
 * snapshot signal written. The recoveries themselves are in lost-slot-recovery.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { LOCAL_CONNECT_ENV, LOCAL_CONNECT_USER } from '../../stack/config.js';
import { runChildProgram } from '../consumers/helpers/child-consumer.js';
import { consumerDatabase } from '../consumers/helpers/stack-fixture.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { useSeatPipeline } from '../support/seat-pipeline.js';
import { adminQuery, requireStack } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();

const RECOVERY = 'monitors/slot-recovery/main.ts';

interface Row {
  name: string;
  args: string[];
  env?: (connector: string) => Record<string, string>;
  exit: number;
  says: (connector: string) => RegExp[];
}

const ROWS: Row[] = [
  {
    name: 'Connect does not answer: exit 1, how to start it or where to point CONNECT_URL',
    args: ['--since', 'auto'],
    env: () => ({ CONNECT_URL: 'http://127.0.0.1:1' }),
    exit: 1,
    says: () => [
      /Kafka Connect at http:\/\/127\.0\.0\.1:1 does not answer; start the stack \(npm run stack -- start\) or set CONNECT_URL/,
    ],
  },
  {
    name: 'a connector Connect does not have: exit 1, CONNECTOR_NAME named',
    args: ['--since', 'auto', '--apply'],
    env: () => ({ CONNECTOR_NAME: 'no-such-connector' }),
    exit: 1,
    says: () => [/Connect has no connector at \/connectors\/no-such-connector\/config; check CONNECTOR_NAME/],
  },
  {
    name: 'no --since: exit 2, the two forms it takes',
    args: ['--apply'],
    exit: 2,
    says: () => [/--since is required: an ISO time \(2026-11-29T09:55:00Z\) or auto/],
  },
  {
    name: 'a --since that is not a time: exit 2, how to write one',
    args: ['--since', 'yesterday', '--apply'],
    exit: 2,
    says: () => [/--since yesterday is not an ISO 8601 time with an offset; write e\.g\. --since 2026-11-29T10:00:00Z/],
  },
  {
    name: '--connector-db without --after-failover: exit 2',
    args: ['--since', 'auto', '--connector-db', '127.0.0.1:54330'],
    exit: 2,
    says: () => [/--connector-db goes with --after-failover/],
  },
  {
    name: 'a slot that is not lost, dry run: exit 0, steps 1-4 and the re-emit skipped, and why',
    args: ['--since', 'auto'],
    exit: 0,
    says: (connector) => [
      new RegExp(`steps 1-4 skipped: slot ${connector} is not lost \\(wal_status \\w+, active\\)`),
      /5\. re-emit skipped: no consumer is missing an event and the slot is healthy/,
    ],
  },
  {
    name: 'a slot that is not lost, --apply with nothing missing: exit 0, nothing stopped, dropped or re-emitted',
    args: ['--since', 'auto', '--apply'],
    exit: 0,
    says: () => [/no gaps|0 missing|clean/i],
  },
];

describe('npm run slot-recovery: nothing to recover, or cannot', () => {
  const pipeline = useSeatPipeline('slotcli', { section: 'A', rows: 1, seatsPerRow: 2, priceCents: 4500 });

  it('each row: its exit code and sentence; the connector, its slot and the signal table untouched', async () => {
    const { connector, adminUrl } = pipeline();
    const inboxes = await consumerDatabase('slot_cli');
    const authorization = `Basic ${Buffer.from(`${LOCAL_CONNECT_USER.username}:${LOCAL_CONNECT_USER.password}`).toString('base64')}`;
    const state = async () => {
      const status = (await (
        await fetch(`${stack.connectUrl}/connectors/${connector.connectorName}/status`, { headers: { authorization } })
      ).json()) as { connector: { state: string }; tasks: { state: string }[] };
      const slot = await adminQuery(
        adminUrl,
        'select active, wal_status from pg_replication_slots where slot_name = $1',
        [connector.slotName],
      );
      const signals = await adminQuery(adminUrl, 'select count(*)::int as n from debezium_signal');
      return {
        connector: status.connector.state,
        tasks: status.tasks.map((t) => t.state),
        slot: slot.rows,
        signals: signals.rows[0].n as number,
      };
    };
    const before = await state();
    expect(before).toMatchObject({ connector: 'RUNNING', tasks: ['RUNNING'], slot: [{ active: true }], signals: 0 });
    try {
      for (const row of ROWS) {
        const env = {
          CONNECT_URL: stack.connectUrl,
          ...LOCAL_CONNECT_ENV,
          CONNECTOR_NAME: connector.connectorName,
          SLOT_RECOVERY_SEAT_DB_URL: adminUrl,
          RECONCILE_CONSUMER_DB_URL: inboxes.url,
          RECONCILE_GRACE_MS: '0',
          SLOT_RECOVERY_VERIFY_TIMEOUT_MS: '30000',
          LOG_LEVEL: 'warn',
          ...row.env?.(connector.connectorName),
        };
        const run = await runChildProgram(RECOVERY, env, row.args);
        expect(run.code, `${row.name}\n${run.output}`).toBe(row.exit);
        for (const says of row.says(connector.slotName)) expect(run.output, row.name).toMatch(says);
        expect(await state(), row.name).toEqual(before);
      }
    } finally {
      await inboxes.close();
    }
  });
});
