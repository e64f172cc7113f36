/**
 * A lost slot stops the outbox purge: on a Postgres cluster of this file's own (1 MB WAL segments,
 * max_slot_wal_keep_size 2MB, so a slot nobody reads is lost within a few segment switches; the
 * shared stack's slots are never at risk), rows that a clean reconciliation covered and that are
 * past the retention stay, the purge says why, and it forgets its checkpoints.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../lib/postgres.js';
import { waitFor } from '../../lib/wait.js';
import { migrateSeatDatabase, setupRoles } from '../../seat-service/database-setup.js';
import { purgeOutbox } from '../../seat-service/retention.js';
import { LOCAL_ROLE_PASSWORDS, stackLayout } from '../../stack/config.js';
import { postgresComponent, postgresHome } from '../../stack/postgres.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { testLogger } from '../support/seat-pipeline.js';
import { adminQuery } from '../support/stack.js';

installLeakGuard();

/** PURGE_TEST_CLUSTER_PORT moves it, when another checkout's tests hold 54357. */
const PORT = Number(process.env.PURGE_TEST_CLUSTER_PORT ?? 54357);
const layout = stackLayout({
  ...process.env,
  STACK_HOME: '.stack/purge-lost-slot-test',
  STACK_POSTGRES_PORT: String(PORT),
  STACK_POSTGRES_WAL_SEGMENT_MB: '1',
  STACK_POSTGRES_MAX_SLOT_WAL_KEEP_SIZE: '2MB',
});
const cluster = postgresComponent(layout);
const url = (database: string, user = 'postgres', password = 'postgres') =>
  `postgres://${user}:${password}@127.0.0.1:${PORT}/${database}`;
const DATABASE = 'purge_lost';
const SLOT = 'purge_lost_slot';

async function removeCluster(): Promise<void> {
  await cluster.stop();
  rmSync(postgresHome(layout), { recursive: true, force: true });
}

async function loseSlot(): Promise<void> {
  await adminQuery(url(DATABASE), 'create table wal_filler (id bigserial primary key, note text not null)');
  await waitFor(
    async () => {
      const { rows } = await adminQuery(
        url(DATABASE),
        'select wal_status from pg_replication_slots where slot_name = $1',
        [SLOT],
      );
      if ((rows[0] as { wal_status: string } | undefined)?.wal_status === 'lost') return true;
      await adminQuery(url(DATABASE), "insert into wal_filler (note) values ('filler')");
      await adminQuery(url(DATABASE), 'select pg_switch_wal()');
      await adminQuery(url(DATABASE), 'checkpoint');
      return false;
    },
    { timeoutMs: 60_000, intervalMs: 10, description: `slot ${SLOT} to be lost` },
  );
}

describe('outbox purge with a lost slot', () => {
  beforeAll(async () => {
    await removeCluster();
    await cluster.launch();
    await waitFor(() => cluster.healthy(), {
      timeoutMs: 60_000,
      intervalMs: 200,
      description: `test Postgres on ${PORT}`,
    });
    await adminQuery(url('postgres'), `create database ${DATABASE}`);
    const admin = createPool({
      connectionString: url(DATABASE),
      applicationName: 'test-migrate',
      logger: testLogger,
      max: 1,
    });
    try {
      await migrateSeatDatabase(admin, testLogger);
      await setupRoles(admin, LOCAL_ROLE_PASSWORDS);
    } finally {
      await admin.end();
    }
  });

  afterAll(async () => {
    await removeCluster();
  });

  it('deletes nothing, says the slot is lost and what to run, and forgets its checkpoints', async () => {
    await adminQuery(url(DATABASE), `select pg_create_logical_replication_slot($1, 'pgoutput')`, [SLOT]);
    const service = createPool({
      connectionString: url(DATABASE, 'stagefront_service', LOCAL_ROLE_PASSWORDS.service),
      applicationName: 'test-purge',
      logger: testLogger,
      max: 1,
    });
    try {
      const { rows } = await service.query<{ id: string }>(
        `insert into outbox (id, aggregatetype, aggregateid, type, payload, ce_source, ce_time, ce_subject)
         select gen_random_uuid(), 'seat', 's' || g, 'com.stagefront.seat.held', '\\x00'::bytea, '/test', now()::text, 's' || g
           from generate_series(1, 3) g returning id::text`,
      );
      const ids = rows.map((row) => row.id);
      await adminQuery(
        url(DATABASE),
        "update outbox set created_at = now() - interval '30 days' where id = any($1::uuid[])",
        [ids],
      );
      // Everything else would let them go: covered by a clean reconciliation, past a checkpoint the slot confirmed.
      await adminQuery(
        url(DATABASE),
        `insert into outbox_reconciled (covered_from, covered_to, snapshot_xmin, consumers)
        select now() - interval '31 days', now() - interval '29 days', pg_snapshot_xmin(pg_current_snapshot())::text::bigint, '{test}'`,
      );
      await adminQuery(
        url(DATABASE),
        `insert into outbox_purge_checkpoints (wal_lsn, snapshot_xmin)
        select pg_current_wal_insert_lsn(), pg_snapshot_xmin(pg_current_snapshot())::text::bigint`,
      );
      await adminQuery(url(DATABASE), 'select pg_replication_slot_advance($1, pg_current_wal_lsn())', [SLOT]);
      await loseSlot();

      const outcome = await purgeOutbox(service, {
        retentionMs: 14 * 86_400_000,
        batchSize: 100,
        slotName: SLOT,
        logger: testLogger,
      });
      const left = await adminQuery(url(DATABASE), 'select count(*)::int as n from outbox where id = any($1::uuid[])', [
        ids,
      ]);
      expect(left.rows[0]).toEqual({ n: ids.length });
      expect(outcome).toMatchObject({
        purged: 0,
        skipped: 'slot_lost',
        sentence: expect.stringMatching(/is lost.*npm run slot-recovery -- --since auto --apply/),
      });
      expect(
        (await adminQuery(url(DATABASE), 'select count(*)::int as n from outbox_purge_checkpoints')).rows[0],
      ).toEqual({ n: 0 });
    } finally {
      await service.end();
      await adminQuery(url(DATABASE), 'select pg_drop_replication_slot($1)', [SLOT]).catch(() => undefined);
    }
  });
});
