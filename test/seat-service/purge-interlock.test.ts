/**
 * The outbox purge deletes a row only when the connector's slot has confirmed it, a clean
 * reconciliation covered it and it is past the retention, and nothing at all while the slot is
 * missing or has no reader. Each test has a seat database and a logical slot of its own, without
 * a connector: a replication connection that never confirms holds the slot active, and
 * pg_replication_slot_advance stands for the connector confirming. Coverage is recorded by the
 * real `npm run reconcile` (its inbox table lives in the same test database). A lost slot needs a
 * cluster of its own with small WAL segments: test/seat-service/purge-lost-slot.test.ts.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../lib/postgres.js';
import { waitFor } from '../../lib/wait.js';
import { migrateSeatDatabase, setupRoles } from '../../seat-service/database-setup.js';
import { purgeOutbox, type PurgeOutcome } from '../../seat-service/retention.js';
import { LOCAL_ROLE_PASSWORDS } from '../../stack/config.js';
import { runChildProgram } from '../consumers/helpers/child-consumer.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { testLogger } from '../support/seat-pipeline.js';
import { adminQuery, createTestDatabase, requireStack, uniqueName } from '../support/stack.js';

requireStack();
installLeakGuard();

const DAY = 86_400_000;
const RETENTION_MS = 14 * DAY;
/** The window the reconciliations of these tests cover: rows aged 30 days fall in it. */
const COVERED = { fromDaysAgo: 31, toDaysAgo: 29 };

interface PurgeDatabase {
  adminUrl: string;
  servicePool: Pool;
  slot: string;
  /** A reader on the slot that never confirms anything: the slot is active, its position stays. */
  holdSlot(): Promise<() => Promise<void>>;
  /** The connector confirming everything written so far (the slot must be without a reader). */
  confirmAll(): Promise<void>;
  /** Outbox rows written by the service role, one transaction, then aged by `daysOld`. */
  write(count: number, daysOld: number): Promise<string[]>;
  /** What each consumer handled: the ids of seat events in the seat-availability inbox. */
  handled(ids: string[]): Promise<void>;
  /** `npm run reconcile` over the covered window; its exit code. */
  reconcile(): Promise<number | null>;
  purge(slotName?: string): Promise<PurgeOutcome>;
  present(ids: string[]): Promise<string[]>;
  close(): Promise<void>;
}

const roleUrl = (adminUrl: string, role: 'service' | 'debezium') =>
  adminUrl.replace('postgres:postgres@', `stagefront_${role}:${LOCAL_ROLE_PASSWORDS[role]}@`);
const isoDaysAgo = async (url: string, days: number) =>
  (
    (
      await adminQuery(
        url,
        `select to_char((now() - make_interval(days => $1)) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as t`,
        [days],
      )
    ).rows[0] as { t: string }
  ).t;

async function slotActive(adminUrl: string, slot: string): Promise<boolean> {
  const { rows } = await adminQuery(adminUrl, 'select active from pg_replication_slots where slot_name = $1', [slot]);
  return (rows[0] as { active: boolean } | undefined)?.active ?? false;
}

async function holdSlot(adminUrl: string, slot: string): Promise<() => Promise<void>> {
  const reader = new pg.Client({ connectionString: adminUrl, replication: 'database' } as pg.ClientConfig);
  reader.on('error', () => undefined);
  await reader.connect();
  // Streams into nothing and never sends a position back: confirmed_flush_lsn does not move.
  reader
    .query(
      `START_REPLICATION SLOT ${pg.escapeIdentifier(slot)} LOGICAL 0/0 (proto_version '1', publication_names 'stagefront_outbox')`,
    )
    .catch(() => undefined);
  await waitFor(() => slotActive(adminUrl, slot), { timeoutMs: 10_000, description: `a reader on slot ${slot}` });
  return track(`reader of slot ${slot}`, async () => {
    await reader.end().catch(() => undefined);
    await waitFor(async () => !(await slotActive(adminUrl, slot)), {
      timeoutMs: 10_000,
      description: `slot ${slot} released`,
    });
  });
}

async function openPurgeDatabase(): Promise<PurgeDatabase> {
  const database = await createTestDatabase('purge');
  const admin = createPool({
    connectionString: database.url,
    applicationName: 'test-migrate',
    logger: testLogger,
    max: 1,
  });
  try {
    await migrateSeatDatabase(admin, testLogger);
    await setupRoles(admin, LOCAL_ROLE_PASSWORDS);
    // The inbox columns reconciliation reads (consumers/migrations/000001_inbox.sql), in the seat database for the test.
    await admin.query(`create table inbox (consumer text not null, event_id text not null, status text not null default 'applied',
                         received_at timestamptz not null default now(), claimed_at timestamptz, primary key (consumer, event_id))`);
  } finally {
    await admin.end();
  }
  const slot = uniqueName('purge_slot').toLowerCase();
  await adminQuery(database.url, `select pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
  const servicePool = createPool({
    connectionString: roleUrl(database.url, 'service'),
    applicationName: 'test-purge',
    logger: testLogger,
    max: 2,
  });
  const readers = new Set<() => Promise<void>>();
  const close = track(`purge database ${database.name}`, async () => {
    for (const release of readers) await release(); // a test that failed half-way may still hold the slot
    await servicePool.end();
    await adminQuery(
      database.url,
      'select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1 and not active',
      [slot],
    );
    await database.drop();
  });
  return {
    adminUrl: database.url,
    servicePool,
    slot,
    holdSlot: async () => {
      const release = await holdSlot(database.url, slot);
      readers.add(release);
      return async () => {
        readers.delete(release);
        await release();
      };
    },
    confirmAll: async () => {
      await adminQuery(database.url, 'select pg_replication_slot_advance($1, pg_current_wal_lsn())', [slot]);
    },
    write: async (count, daysOld) => {
      const { rows } = await servicePool.query<{ id: string }>(
        `insert into outbox (id, aggregatetype, aggregateid, type, payload, ce_source, ce_time, ce_subject)
         select gen_random_uuid(), 'seat', 's' || g, 'com.stagefront.seat.held', '\\x00'::bytea, '/test', now()::text, 's' || g
           from generate_series(1, $1::int) g returning id::text`,
        [count],
      );
      const ids = rows.map((row) => row.id);
      await adminQuery(
        database.url,
        'update outbox set created_at = now() - make_interval(days => $2) where id = any($1::uuid[])',
        [ids, daysOld],
      );
      return ids;
    },
    handled: async (ids) => {
      await adminQuery(
        database.url,
        `insert into inbox (consumer, event_id) select 'seat-availability', unnest($1::text[])`,
        [ids],
      );
    },
    reconcile: async () => {
      const run = await runChildProgram(
        'monitors/reconciliation/main.ts',
        {
          RECONCILE_SEAT_DB_URL: roleUrl(database.url, 'debezium'),
          RECONCILE_CONSUMER_DB_URL: database.url,
          RECONCILE_COVERAGE_DB_URL: '',
          RECONCILE_CONSUMERS: 'seat-availability,sales-ledger,confirmation-email',
          LOG_LEVEL: 'warn',
        },
        [
          '--from',
          await isoDaysAgo(database.url, COVERED.fromDaysAgo),
          '--to',
          await isoDaysAgo(database.url, COVERED.toDaysAgo),
        ],
      );
      if (run.code !== 0 && run.code !== 3) throw new Error(`reconcile exited ${run.code}: ${run.output}`);
      return run.code;
    },
    purge: (slotName = slot) =>
      purgeOutbox(servicePool, { retentionMs: RETENTION_MS, batchSize: 2, slotName, logger: testLogger }),
    present: async (ids) =>
      (await adminQuery(database.url, 'select id::text from outbox where id = any($1::uuid[]) order by id', [ids])).rows
        .map((r) => (r as { id: string }).id)
        .sort(),
    close,
  };
}

const sorted = (ids: string[]) => [...ids].sort();

describe('outbox purge interlock', () => {
  it('keeps rows the slot has not confirmed, and deletes them once it has', async () => {
    const db = await openPurgeDatabase();
    try {
      let release = await db.holdSlot();
      const aged = await db.write(5, 30);
      await db.handled(aged);
      expect(await db.reconcile()).toBe(0);

      // The slot is still where it was created: no checkpoint after these rows is confirmed.
      const first = await db.purge();
      const second = await db.purge();
      expect(await db.present(aged)).toEqual(sorted(aged));
      expect([first, second]).toEqual([{ purged: 0 }, { purged: 0 }]);

      await release();
      await db.confirmAll();
      release = await db.holdSlot();
      expect(await db.purge()).toEqual({ purged: aged.length });
      expect(await db.present(aged)).toEqual([]);
      await release();
    } finally {
      await db.close();
    }
  });

  it('keeps rows newer than what reconciliation covered, older rows it never covered, and rows written after the newest confirmed checkpoint', async () => {
    const db = await openPurgeDatabase();
    try {
      const covered = await db.write(3, 30);
      const pastRetentionNotCovered = await db.write(2, 20);
      const olderThanTheWindow = await db.write(2, 40);
      const young = await db.write(2, 0);
      let release = await db.holdSlot();
      await db.purge(); // leaves a checkpoint after every row so far
      await release();
      const afterTheCheckpoint = await db.write(2, 30);
      await db.handled([
        ...covered,
        ...pastRetentionNotCovered,
        ...olderThanTheWindow,
        ...young,
        ...afterTheCheckpoint,
      ]);
      expect(await db.reconcile()).toBe(0);
      await db.confirmAll();
      release = await db.holdSlot();
      const outcome = await db.purge();
      const kept = [...pastRetentionNotCovered, ...olderThanTheWindow, ...young, ...afterTheCheckpoint];
      expect(await db.present([...covered, ...kept])).toEqual(sorted(kept));
      expect(outcome).toEqual({ purged: covered.length });
      // The next run may use the checkpoint the last one left, which is after them.
      await release();
      await db.confirmAll();
      release = await db.holdSlot();
      expect(await db.purge()).toEqual({ purged: afterTheCheckpoint.length });
      await release();
    } finally {
      await db.close();
    }
  });

  it('a reconciliation with gaps covers nothing: the rows some consumer has not handled stay', async () => {
    const db = await openPurgeDatabase();
    try {
      const aged = await db.write(4, 30);
      await db.handled(aged.slice(0, 3));
      expect(await db.reconcile()).toBe(3);
      let release = await db.holdSlot();
      await db.purge();
      await release();
      await db.confirmAll();
      release = await db.holdSlot();
      const outcome = await db.purge();
      expect(await db.present(aged)).toEqual(sorted(aged));
      expect(outcome).toMatchObject({ purged: 0, skipped: 'not_reconciled' });
      await release();
    } finally {
      await db.close();
    }
  });

  it('deletes nothing while the slot has no reader, or is missing, and says why', async () => {
    const db = await openPurgeDatabase();
    try {
      const aged = await db.write(3, 30);
      await db.handled(aged);
      expect(await db.reconcile()).toBe(0);
      const release = await db.holdSlot();
      await db.purge();
      await release();
      await db.confirmAll();
      // Everything else allows these rows to go now: only the slot's state keeps them.
      const inactive = await db.purge();
      expect(await db.present(aged)).toEqual(sorted(aged));
      expect(inactive).toMatchObject({
        purged: 0,
        skipped: 'slot_inactive',
        sentence: expect.stringMatching(/has no reader.*start the connector/),
      });
      const missing = await db.purge('no_such_slot');
      expect(missing).toMatchObject({
        purged: 0,
        skipped: 'slot_missing',
        sentence: expect.stringMatching(/does not exist.*slot-recovery/),
      });
      expect(await db.present(aged)).toEqual(sorted(aged));
      // A missing slot forgets the checkpoints: a slot created later confirms nothing about them.
      expect(
        (await adminQuery(db.adminUrl, 'select count(*)::int as n from outbox_purge_checkpoints')).rows[0],
      ).toEqual({ n: 0 });
    } finally {
      await db.close();
    }
  });

  it('the command exits 0 with "skipped" and why; a retention not above Kafka\'s is refused at start', async () => {
    const db = await openPurgeDatabase();
    try {
      const aged = await db.write(2, 30);
      const env = {
        SEAT_DB_URL: roleUrl(db.adminUrl, 'service'),
        SEAT_DB_ADMIN_URL: db.adminUrl,
        SLOT_NAME: db.slot,
        SEAT_SERVICE_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.service,
        DEBEZIUM_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.debezium,
        LOG_LEVEL: 'warn',
      };
      const skipped = await runChildProgram('seat-service/cli.ts', env, ['purge-outbox']);
      expect(await db.present(aged)).toEqual(sorted(aged));
      expect(skipped.code).toBe(0);
      expect(skipped.output).toContain('"skipped":"slot_inactive"');
      expect(skipped.output).toMatch(/outbox purge skipped: slot \S+ has no reader/);
      const refused = await runChildProgram('seat-service/cli.ts', { ...env, OUTBOX_RETENTION_MS: String(7 * DAY) }, [
        'purge-outbox',
      ]);
      expect(refused.code).toBe(2);
      expect(refused.output).toMatch(
        /OUTBOX_RETENTION_MS=604800000 \(7 days\) must be longer than EVENT_TOPIC_RETENTION_MS=604800000/,
      );
      expect(await db.present(aged)).toEqual(sorted(aged));
    } finally {
      await db.close();
    }
  });
});
