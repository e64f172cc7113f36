/**
 * Fault drill: an operator raises max_slot_wal_keep_size to save a slot in trouble, and the monitor,
 * in enforce mode, must not undo it. A real Debezium connector holds the slot on the slot-test
 * cluster (1 MB WAL segments); it is stopped while WAL is written towards the monitor's target; the
 * operator raises the cap; WAL goes on past the target. The raise must stand and the slot survive a
 * checkpoint, with SlotKeepSizeRaised; once the connector is back and the slot has caught up, the
 * monitor restores the target by itself and the alert resolves.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import {
  createOutboxConnector,
  deleteConnector,
  deleteOutboxTopic,
  resumeConnector,
  stopConnector,
  waitForSlotActive,
} from './support/debezium-connector.js';
import { NO_ALERTMANAGER, okPolls, startMonitorInProcess } from './support/monitor-under-test.js';
import { monitorRoleUrl, setClusterSettings, startSlotCluster, type SlotCluster } from './support/slot-cluster.js';
import { WalTraffic, type SlotState } from './support/wal-traffic.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const MB = 1024 * 1024;
const TARGET = '16MB';
const MARGIN = '4MB';
/** The operator's emergency value. */
const RAISED = '64MB';
/** The monitor restores the target once every slot retains at most this (target - margin). */
const RESTORE_AT = 12 * MB;

const { connectUrl } = requireStack();
installLeakGuard();

describe('fault drill: an operator raises the cap to save a stalled slot', () => {
  let cluster: SlotCluster;
  let receiver: WebhookReceiver;
  let traffic: WalTraffic;
  let database: string;
  const slotName = uniqueName('raise').toLowerCase();
  const connector = uniqueName('raise-conn');
  const topicPrefix = connector.replace(/_/g, '-');
  /** Every wal_status the test saw, in order: the slot must never be lost. */
  const seen: (string | null)[] = [];

  const keepSize = async () =>
    ((await cluster.admin(/* sql */ `show max_slot_wal_keep_size`)).rows[0] as { max_slot_wal_keep_size: string })
      .max_slot_wal_keep_size;
  const slot = async (): Promise<SlotState | undefined> => {
    const state = await traffic.slotState(slotName);
    seen.push(state === undefined ? 'missing' : state.walStatus);
    return state;
  };

  beforeAll(async () => {
    cluster = await startSlotCluster();
    const { rows: others } = await cluster.admin(/* sql */ `select slot_name from pg_replication_slots`);
    expect(others, 'no other slot on the cluster: every slot counts in the decision on the cap').toEqual([]);
    database = await cluster.createDatabase('keepraise');
    await cluster.admin(
      /* sql */ `create table outbox (id bigserial primary key, created_at timestamptz not null default now(), payload text)`,
      [],
      database,
    );
    await cluster.admin(
      /* sql */ `create publication ${pg.escapeIdentifier(`${slotName}_pub`)} for table outbox`,
      [],
      database,
    );
    // The cap at the monitor's target; checkpoints only when the test asks (a slot past the cap is lost at the next one).
    await setClusterSettings(cluster, {
      max_slot_wal_keep_size: TARGET,
      max_wal_size: '1GB',
      checkpoint_timeout: '1h',
    });
    traffic = await WalTraffic.connect(cluster.urlFor(database));
    receiver = await startWebhookReceiver();
    await createOutboxConnector({
      connectUrl,
      name: connector,
      cluster,
      database,
      slotName,
      publicationName: `${slotName}_pub`,
      topicPrefix,
      createTopic: true,
    });
    await waitForSlotActive(cluster, slotName, true);
  });

  afterAll(async () => {
    await deleteConnector(connectUrl, connector).catch(() => undefined);
    await deleteOutboxTopic(topicPrefix).catch(() => undefined);
    await traffic?.close();
    // The slot counts in every later decision on the cluster's cap: gone once its reader let go.
    if (cluster) await waitForSlotActive(cluster, slotName, false).catch(() => undefined);
    await cluster
      ?.admin(
        /* sql */ `select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1 and not active`,
        [slotName],
      )
      .catch(() => undefined);
    await cluster
      ?.admin(/* sql */ `drop database if exists ${pg.escapeIdentifier(database)} with (force)`)
      .catch(() => undefined);
    await receiver?.close();
    await cluster?.stop();
  });

  const startMonitor = async (mode: 'enforce' | 'check' = 'enforce') =>
    startMonitorInProcess({
      SLOT_MONITOR_DATABASE_URL: await monitorRoleUrl(cluster, database),
      SLOT_MONITOR_POLL_INTERVAL_MS: '250',
      SLOT_MONITOR_SLOTS: slotName,
      SLOT_MONITOR_KEEP_SIZE_MODE: mode,
      SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE: TARGET,
      SLOT_MONITOR_KEEP_SIZE_MARGIN: MARGIN,
      SLOT_MONITOR_ALERTMANAGER_URL: NO_ALERTMANAGER,
      SLOT_MONITOR_WEBHOOK_URL: receiver.genericUrl,
    });
  /** The first webhook call of `name` in `status` from index `from` on. */
  const call = (name: string, status: 'firing' | 'resolved', from = 0) =>
    receiver.generic.slice(from).find((c) => c.body.alertname === name && c.body.status === status);
  const arrival = (name: string, status: 'firing' | 'resolved', from: number) =>
    waitFor(() => call(name, status, from), {
      timeoutMs: 10_000,
      intervalMs: 50,
      description: `${name} ${status} at the webhook`,
    });
  /** The reader stalls: the connector's tasks stop and nobody reads the slot. */
  const stall = async () => {
    await stopConnector(connectUrl, connector);
    await waitForSlotActive(cluster, slotName, false);
  };
  /** WAL outside the publication, a segment at a time, until the stalled slot retains `bytes`. */
  const writeUntilRetained = (bytes: number) =>
    waitFor(
      async () => {
        await traffic.step();
        return ((await slot())?.retained ?? 0) >= bytes;
      },
      { timeoutMs: 60_000, intervalMs: 0, description: `slot ${slotName} to retain ${bytes / MB} MB` },
    );
  /**
   * The reader is back; an outbox row gives it a position to confirm, and a checkpoint logs the
   * running-transactions record its restart_lsn moves to, until the slot is below the restore size.
   */
  const catchUp = async () => {
    await resumeConnector(connectUrl, connector);
    await waitForSlotActive(cluster, slotName, true);
    await waitFor(
      async () => {
        await cluster.admin(/* sql */ `insert into outbox (payload) values ('caught up')`, [], database);
        await traffic.checkpoint();
        return ((await slot())?.retained ?? Infinity) <= RESTORE_AT - MB;
      },
      { timeoutMs: 60_000, intervalMs: 1000, description: `slot ${slotName} to catch up below ${RESTORE_AT / MB} MB` },
    );
  };
  const neverLost = () =>
    expect(
      seen.filter((status) => ['lost', 'missing', 'unreserved'].includes(status ?? '')),
      `wal_status seen: ${seen.join(' ')}`,
    ).toEqual([]);

  it("holds an operator's raise while the slot retains more than the target, keeps the slot, alerts, and restores the target once it caught up", async () => {
    const monitor = await startMonitor();
    const polls = () => okPolls(monitor.http.url);
    const morePolls = async (count: number) => {
      const from = await polls();
      await waitFor(async () => (await polls()) >= from + count, {
        timeoutMs: 10_000,
        intervalMs: 50,
        description: `${count} more polls of the monitor`,
      });
    };
    try {
      await stall();
      await writeUntilRetained(RESTORE_AT);
      await morePolls(2);
      expect(await keepSize(), 'at the target the monitor leaves the cap alone').toBe(TARGET);

      // The operator's emergency raise, then the burst goes on past the target.
      await setClusterSettings(cluster, { max_slot_wal_keep_size: RAISED });
      await writeUntilRetained(2 * RESTORE_AT);
      await morePolls(3);
      await traffic.checkpoint();
      expect((await slot())?.walStatus, 'the slot survives a checkpoint under the raise').toMatch(
        /^(reserved|extended)$/,
      );
      expect(await keepSize(), 'the monitor must not lower the cap below what the slot retains').toBe(RAISED);

      const raised = await arrival('SlotKeepSizeRaised', 'firing', 0);
      expect(raised.body.labels.severity).toBe('warning');
      expect(raised.body.summary).toMatch(
        new RegExp(
          `^max_slot_wal_keep_size is raised to 64 MB, 48 MB above the target 16 MB, and kept there because slot ${slotName} retains [\\d.]+ MB; the monitor restores 16 MB by itself once every slot retains at most 12 MB\\.$`,
        ),
      );
      const metrics = await (await fetch(`${monitor.http.url}/metrics`)).text();
      expect(metrics).toMatch(/^slot_monitor_keep_size_raise_held\{[^}]*\} 1$/m);
      expect(call('SlotKeepSizeMismatch', 'firing'), 'a held raise is not a mismatch').toBeUndefined();

      await catchUp();
      await waitFor(async () => (await keepSize()) === TARGET, {
        timeoutMs: 10_000,
        intervalMs: 50,
        description: `the monitor to restore ${TARGET}`,
      });
      await arrival('SlotKeepSizeRaised', 'resolved', 0);
      const corrected = await arrival('SlotKeepSizeCorrected', 'firing', 0);
      expect(corrected.body.summary).toBe(
        'The slot monitor changed max_slot_wal_keep_size from 64 MB to 16 MB on the seat database.',
      );
      expect((await slot())?.active, 'the same slot, read again').toBe(true);
      neverLost();
    } finally {
      await monitor.close();
    }
  });

  it('caps -1 at what the slot retains plus the margin, not at the target that would invalidate it, and steps down once it caught up', async () => {
    await stall();
    await setClusterSettings(cluster, { max_slot_wal_keep_size: '-1' });
    await writeUntilRetained(2 * RESTORE_AT);
    const from = receiver.generic.length;
    const monitor = await startMonitor();
    try {
      await waitFor(async () => (await keepSize()) !== '-1', {
        timeoutMs: 10_000,
        intervalMs: 50,
        description: 'the monitor to cap -1 at once',
      });
      await traffic.checkpoint();
      expect((await slot())?.walStatus, "the slot survives a checkpoint under the monitor's cap").toMatch(
        /^(reserved|extended)$/,
      );
      const capped = await arrival('SlotKeepSizeRaised', 'firing', from);
      const cap = await keepSize();
      const capBytes = Number(/^(\d+)MB$/.exec(cap)?.[1]) * MB;
      const retained = (await slot())?.retained ?? Infinity;
      expect(capBytes, `the cap ${cap} leaves the slot (${retained} bytes) its margin`).toBeGreaterThanOrEqual(
        2 * RESTORE_AT + 4 * MB,
      );
      expect(capBytes).toBeGreaterThan(retained);
      expect(capped.body.summary).toMatch(
        new RegExp(
          `^The slot monitor capped the unlimited max_slot_wal_keep_size at ${capBytes / MB} MB, [\\d.]+ MB above its target 16 MB, because slot ${slotName} retains [\\d.]+ MB; the monitor restores 16 MB by itself once every slot retains at most 12 MB\\.$`,
        ),
      );
      expect((await arrival('SlotKeepSizeCorrected', 'firing', from)).body.summary).toBe(
        `The slot monitor changed max_slot_wal_keep_size from -1 (unlimited) to ${capBytes / MB} MB on the seat database.`,
      );

      await catchUp();
      await waitFor(async () => (await keepSize()) === TARGET, {
        timeoutMs: 10_000,
        intervalMs: 50,
        description: `the monitor to step down to ${TARGET}`,
      });
      await arrival('SlotKeepSizeRaised', 'resolved', from);
      neverLost();
    } finally {
      await monitor.close();
    }
  });

  it('check-only mode changes nothing: -1 is a mismatch naming the safe value, a held raise says to set the target back by hand', async () => {
    await stall();
    await setClusterSettings(cluster, { max_slot_wal_keep_size: '-1' });
    await writeUntilRetained(2 * RESTORE_AT);
    const from = receiver.generic.length;
    const monitor = await startMonitor('check');
    try {
      const mismatch = await arrival('SlotKeepSizeMismatch', 'firing', from);
      expect(mismatch.body.description).toMatch(
        new RegExp(
          `check-only mode: the monitor does not change it\\. Set it to \\d+ MB, not the target: slot ${slotName} retains`,
        ),
      );
      expect(await keepSize()).toBe('-1');

      await setClusterSettings(cluster, { max_slot_wal_keep_size: RAISED });
      const raised = await arrival('SlotKeepSizeRaised', 'firing', from);
      expect(raised.body.summary).toMatch(
        /; check-only mode: set it back to 16 MB by hand once every slot retains at most 12 MB\.$/,
      );
      await arrival('SlotKeepSizeMismatch', 'resolved', from);

      await catchUp();
      await arrival('SlotKeepSizeRaised', 'resolved', from);
      const mismatches = () =>
        receiver.generic
          .slice(from)
          .filter((c) => c.body.alertname === 'SlotKeepSizeMismatch' && c.body.status === 'firing');
      await waitFor(() => mismatches().length === 2, {
        timeoutMs: 10_000,
        intervalMs: 50,
        description: 'SlotKeepSizeMismatch again once no slot needs the raise',
      });
      expect(await keepSize(), 'check-only mode never changes the setting').toBe(RAISED);
      expect(call('SlotKeepSizeCorrected', 'firing', from)).toBeUndefined();
      neverLost();
    } finally {
      await monitor.close();
    }
  });
});
