/**
 * A real Debezium connector holds a slot on the slot-test cluster (1 MB WAL segments). The
 * connector is stopped while WAL is written; the slot goes extended → unreserved → lost and a
 * real Alertmanager forwards each alert once, in that order. A fresh slot then resolves them.
 * Each test has its own database, slot, connector and monitor; they assert order and eventual
 * arrival, and only print how long each alert took.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { startAlertmanager, type AlertmanagerProcess } from './support/alertmanager-process.js';
import {
  createOutboxConnector,
  deleteConnector,
  stopConnector,
  waitForSlotActive,
} from './support/debezium-connector.js';
import { startMonitorInProcess } from './support/monitor-under-test.js';
import { monitorRoleUrl, setClusterSettings, startSlotCluster, type SlotCluster } from './support/slot-cluster.js';
import { WalTraffic } from './support/wal-traffic.js';
import { received, startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { runbookText } from '../../monitors/alerts/alert-spec.js';
import { SLOT_ALERTS } from '../../monitors/alerts/slot-alerts.js';

const POLL_INTERVAL_MS = 1000;
const MB = 1024 * 1024;

const { connectUrl } = requireStack();
installLeakGuard();

describe('slot monitor: wal_status alerts through a real Alertmanager', () => {
  let cluster: SlotCluster;
  let receiver: WebhookReceiver;
  let alertmanager: AlertmanagerProcess;
  const cleanups: (() => Promise<void>)[] = [];
  const latencies: Record<string, number> = {};

  /** A database with an outbox, its publication, a slot held by a real connector, and a monitor watching that slot. */
  async function watchedSlot(prefix: string) {
    const database = await cluster.createDatabase(prefix);
    const slotName = uniqueName(prefix).toLowerCase();
    const connectors = [uniqueName(`${prefix}-a`), uniqueName(`${prefix}-b`)];
    cleanups.push(async () => {
      for (const name of connectors) await deleteConnector(connectUrl, name).catch(() => undefined);
      await cluster
        .admin(
          /* sql */ `select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1 and not active`,
          [slotName],
        )
        .catch(() => undefined);
      await cluster
        .admin(/* sql */ `drop database if exists ${pg.escapeIdentifier(database)} with (force)`)
        .catch(() => undefined);
    });
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
    const traffic = await WalTraffic.connect(cluster.urlFor(database));
    const connect = async (name: string) => {
      await createOutboxConnector({
        connectUrl,
        name,
        cluster,
        database,
        slotName,
        publicationName: `${slotName}_pub`,
        topicPrefix: name.replace(/_/g, '-'),
      });
      await waitForSlotActive(cluster, slotName, true);
    };
    await connect(connectors[0] ?? '');
    const monitor = await startMonitorInProcess({
      SLOT_MONITOR_DATABASE_URL: await monitorRoleUrl(cluster, database),
      SLOT_MONITOR_POLL_INTERVAL_MS: String(POLL_INTERVAL_MS),
      SLOT_MONITOR_SLOTS: slotName,
      SLOT_MONITOR_INACTIVE_ALERT_AFTER_MS: '3000',
      SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE: '24MB',
      SLOT_MONITOR_GROWTH_WINDOW_POLLS: '3',
      SLOT_MONITOR_GROWTH_MIN_BYTES: '2MB',
      SLOT_MONITOR_ALERTMANAGER_URL: alertmanager.url,
      SLOT_MONITOR_ALERTMANAGER_RESEND_MS: '1000',
      SLOT_MONITOR_WEBHOOK_URL: receiver.genericUrl,
    });
    const mine = (alert: { labels: Record<string, string> }) =>
      alert.labels.database?.endsWith(`/${database}`) === true;
    /** Ends what the test started: its monitor, its connectors and its WAL connection. */
    const close = async () => {
      await monitor.close();
      for (const name of connectors) await deleteConnector(connectUrl, name).catch(() => undefined);
      await traffic.close();
    };
    return { database, slotName, connectors, traffic, connect, mine, close };
  }

  async function alertArrival(
    name: string,
    status: 'firing' | 'resolved',
    slotName: string,
    changedAt: number,
  ): Promise<void> {
    const alert = await waitFor(() => received(receiver, name, status, slotName)[0], {
      timeoutMs: 30_000,
      intervalMs: 20,
      description: `${name} ${status} at the Alertmanager webhook`,
    });
    latencies[`${name} ${status}`] = alert.receivedAt - changedAt;
  }

  beforeAll(async () => {
    cluster = await startSlotCluster();
    // extended beyond 16 MB (max_wal_size), unreserved beyond 24 MB; checkpoints only when the test asks.
    await setClusterSettings(cluster, {
      max_wal_size: '16MB',
      min_wal_size: '2MB',
      max_slot_wal_keep_size: '24MB',
      checkpoint_completion_target: '0',
      checkpoint_timeout: '1h',
    });
    receiver = await startWebhookReceiver();
    alertmanager = await startAlertmanager(receiver);
  });

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await alertmanager?.close();
    await receiver?.close();
    await cluster?.stop();
    console.log(
      'slot monitor alert latencies (ms from the change the test saw to the Alertmanager webhook; not asserted):',
      latencies,
    );
  });

  it('alerts when retained WAL grows while the outbox gets no rows, and resolves once an outbox row moves the slot', async () => {
    const { database, slotName, traffic, mine, close } = await watchedSlot('slotgrow');
    try {
      await waitFor(() => received(receiver, 'Watchdog', 'firing').some(mine), {
        timeoutMs: 10_000,
        description: "this monitor's Watchdog at the dead man's switch",
      });
      expect(
        receiver.alerts.filter((a) => a.labels.slot_name === slotName),
        'a healthy slot raises nothing',
      ).toEqual([]);
      await waitFor(
        async () => {
          await traffic.step();
          return received(receiver, 'SlotWalGrowingWithoutOutboxWrites', 'firing', slotName)[0];
        },
        {
          timeoutMs: 30_000,
          intervalMs: 400,
          description: 'SlotWalGrowingWithoutOutboxWrites while the connector reads but the outbox is idle',
        },
      );
      await cluster.admin(/* sql */ `insert into outbox (payload) values ('moves the slot')`, [], database);
      await waitFor(() => received(receiver, 'SlotWalGrowingWithoutOutboxWrites', 'resolved', slotName)[0], {
        timeoutMs: 30_000,
        intervalMs: 100,
        description:
          'SlotWalGrowingWithoutOutboxWrites to resolve after an outbox insert (at the next offset flush of Connect)',
      });
    } finally {
      await close();
    }
  });

  it('alerts extended, unreserved and lost in that order, each once, while the database stays up; a fresh slot resolves them', async () => {
    const { slotName, connectors, traffic, connect, close } = await watchedSlot('slotlose');
    try {
      await stopConnector(connectUrl, connectors[0] ?? '');
      await waitForSlotActive(cluster, slotName, false);
      await traffic.checkpoint();
      // Manual checkpoints every few segments keep WAL-triggered ones away until the test asks for one.
      const extendedAt = await traffic.stepUntil(slotName, 'extended', 40, async (step, state) => {
        if (step % 4 === 3 && (state?.safeWalSize ?? Infinity) > 3 * MB) await traffic.checkpoint();
      });
      await alertArrival('SlotWalExtended', 'firing', slotName, extendedAt);

      await traffic.checkpoint();
      const unreservedAt = await traffic.stepUntil(slotName, 'unreserved', 15);
      await alertArrival('SlotWalUnreserved', 'firing', slotName, unreservedAt);

      await traffic.checkpoint();
      const lostAt = await waitFor(
        async () => (await traffic.slotState(slotName))?.walStatus === 'lost' && Date.now(),
        {
          timeoutMs: 10_000,
          intervalMs: 20,
          description: `slot ${slotName} to be lost after a checkpoint`,
        },
      );
      await alertArrival('SlotLost', 'firing', slotName, lostAt);

      const sequence = ['SlotWalExtended', 'SlotWalUnreserved', 'SlotLost'];
      const firings = receiver.alerts.filter(
        (a) => a.status === 'firing' && sequence.includes(a.name) && a.labels.slot_name === slotName,
      );
      expect(firings.map((a) => a.name)).toEqual(sequence);
      await waitFor(() => received(receiver, 'SlotInactive', 'firing', slotName).length === 1, {
        timeoutMs: 10_000,
        intervalMs: 50,
        description: 'SlotInactive once the stopped connector left the slot idle for 3 s',
      });
      expect(firings[2]?.annotations.runbook).toBe(runbookText(SLOT_ALERTS.SlotLost));
      expect(firings[2]?.annotations.runbook).toContain('npm run slot-recovery -- --since auto --apply');
      const generic = receiver.generic.filter(
        (c) =>
          c.body.status === 'firing' && sequence.includes(c.body.alertname) && c.body.labels.slot_name === slotName,
      );
      expect(generic.map((c) => c.body.alertname)).toEqual(sequence);
      expect((await cluster.admin(/* sql */ `select 1 as up`)).rows).toEqual([{ up: 1 }]);

      await deleteConnector(connectUrl, connectors[0] ?? '');
      await cluster.admin(/* sql */ `select pg_drop_replication_slot($1)`, [slotName]);
      await connect(connectors[1] ?? '');
      const replacedAt = Date.now();
      const fired = [
        ...new Set(
          receiver.alerts.filter((a) => a.status === 'firing' && a.labels.slot_name === slotName).map((a) => a.name),
        ),
      ];
      expect(fired).toEqual(
        expect.arrayContaining(['SlotWalExtended', 'SlotWalUnreserved', 'SlotLost', 'SlotInactive']),
      );
      for (const name of fired) {
        await waitFor(() => received(receiver, name, 'resolved', slotName).length === 1, {
          timeoutMs: 15_000,
          intervalMs: 50,
          description: `${name} resolved once`,
        });
      }
      latencies['all resolved after replacement'] =
        Math.max(
          ...receiver.alerts
            .filter((a) => a.status === 'resolved' && a.labels.slot_name === slotName)
            .map((a) => a.receivedAt),
        ) - replacedAt;
      const stillActive = (await alertmanager.activeAlerts()).filter((a) => a.labels.slot_name === slotName);
      expect(stillActive).toEqual([]);
    } finally {
      await close();
    }
  });
});
