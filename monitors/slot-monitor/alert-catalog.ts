/**
 * Every alert the slot monitor raises: its severity and the runbook steps on-call follows.
 * The summary and description of each firing are written by the code that detects it
 * (slot-conditions.ts, keep-size.ts, slot-source.ts) with the numbers of that moment.
 * docs/operations.md explains each one at length (each alert's runbook_url links to its section).
 */
import type { AlertDefinition, Severity } from '../alerting/alert-tracker.js';

export type { AlertDefinition, Severity };

const STOPPED_READER_STEPS = [
  'Find the connector that owns the slot: curl -s -u "$CONNECT_USERNAME:$CONNECT_PASSWORD" $CONNECT_URL/connectors?expand=status (slot.name in its config).',
  'If it is FAILED or STOPPED, read the task trace, fix the cause, then restart it: curl -X POST -u "$CONNECT_USERNAME:$CONNECT_PASSWORD" "$CONNECT_URL/connectors/<name>/restart?includeTasks=true&onlyFailed=true" (or PUT .../resume).',
  'Watch retained WAL fall on the slot-monitor dashboard or: select slot_name, active, wal_status, safe_wal_size from pg_replication_slots;',
];

const RAISE_STEP =
  "If the disk has room for more WAL, raise the cap to save the slot: alter system set max_slot_wal_keep_size = '<size>'; select pg_reload_conf(); (the monitor holds the raise while the slot needs it: SlotKeepSizeRaised). Without the room, do NOT: a full disk stops every sale.";

export const ALERTS = {
  SlotWalExtended: {
    severity: 'warning',
    runbook: [
      'The slot keeps more WAL than max_wal_size: its reader is behind or stopped. Nothing is lost yet.',
      ...STOPPED_READER_STEPS,
      'If the reader cannot be fixed before safe_wal_size reaches 0, plan for the lost-slot recovery (docs/recovery.md).',
    ],
  },
  SlotWalUnreserved: {
    severity: 'critical',
    runbook: [
      'The slot is past max_slot_wal_keep_size: the next checkpoint (at most checkpoint_timeout away, sooner under write load) invalidates it and the events in that WAL are gone from the slot.',
      RAISE_STEP,
      ...STOPPED_READER_STEPS,
      'If the reader catches up, the alert resolves. If the slot becomes lost, follow SlotLost.',
    ],
  },
  SlotLost: {
    severity: 'critical',
    runbook: [
      'The slot was invalidated: the WAL it needed is deleted and Debezium can never stream from it again (it retries for ~30 minutes, then fails). The events are still in the outbox table within its retention.',
      'Automated: npm run slot-recovery -- --since auto (prints the plan), then again with --apply; it does every step below and checks the inboxes (docs/recovery.md).',
      'Stop the connector: curl -X PUT -u "$CONNECT_USERNAME:$CONNECT_PASSWORD" $CONNECT_URL/connectors/<name>/stop',
      'Note T, the created_at of the oldest outbox row some consumer has not handled (npm run reconcile), minus a few minutes: the re-emit starts there.',
      "Drop the lost slot on the seat database: select pg_drop_replication_slot('<slot>');",
      'Reset the connector offsets: curl -X DELETE -u "$CONNECT_USERNAME:$CONNECT_PASSWORD" $CONNECT_URL/connectors/<name>/offsets',
      'Resume it: curl -X PUT -u "$CONNECT_USERNAME:$CONNECT_PASSWORD" $CONNECT_URL/connectors/<name>/resume (it creates the slot again, streaming from now).',
      'Re-emit the outbox rows written since the last event the consumers handled, with an incremental snapshot of the outbox filtered by time (docs/recovery.md); consumers drop duplicates by ce_id.',
    ],
  },
  SlotHeadroomLow: {
    severity: 'warning',
    runbook: [
      'safe_wal_size is below the warning fraction of max_slot_wal_keep_size: the slot is heading for unreserved, then lost.',
      ...STOPPED_READER_STEPS,
      'If the reader is healthy but slow, check Connect task lag and the Kafka broker; a heavy write burst on the seat database also shows up here.',
    ],
  },
  SlotHeadroomCritical: {
    severity: 'critical',
    runbook: [
      'safe_wal_size is below the critical fraction of max_slot_wal_keep_size: minutes of writes are left before the slot passes the cap.',
      ...STOPPED_READER_STEPS,
      RAISE_STEP,
      'Prepare the lost-slot recovery (SlotLost) in case the reader cannot be fixed in time.',
    ],
  },
  SlotInactive: {
    severity: 'warning',
    runbook: [
      'No process has read the slot for longer than the configured time, so its retained WAL only grows.',
      ...STOPPED_READER_STEPS,
      "If the slot belongs to nothing any more (an old connector), drop it: select pg_drop_replication_slot('<slot>');",
    ],
  },
  SlotMissing: {
    severity: 'critical',
    runbook: [
      'A slot the pipeline needs does not exist: nothing captures outbox rows, and when the connector creates it again it starts from that moment, skipping what was written in between.',
      'Check whether someone dropped it (database log: grep pg_drop_replication_slot) or the connector was deleted.',
      'Restart or recreate the connector so the slot exists again, then re-emit the outbox rows written while it was missing: npm run slot-recovery -- --since auto --apply does both (docs/recovery.md).',
    ],
  },
  SlotWalGrowingWithoutOutboxWrites: {
    severity: 'warning',
    runbook: [
      "The slot's reader is connected but does not confirm progress, because nothing is written to the outbox while other tables produce WAL: the Debezium heartbeat is not working.",
      'Check the connector has heartbeat.interval.ms and heartbeat.action.query (pg_logical_emit_message) set, and that the Connect worker can run it.',
      'Confirm in the connector logs that heartbeats are emitted; retained WAL should fall within offset.flush.interval.ms once they are.',
    ],
  },
  SlotCapTooSmallForWalRate: {
    severity: 'warning',
    runbook: [
      'The database has written WAL fast enough that a burst like it, between two confirmations of an active slot (the 15 s running-transactions interval + offset flush + heartbeat interval), would take more than max_slot_wal_keep_size: a healthy, active slot would go unreserved and then lost. Nothing is lost yet.',
      "If the disk has room, raise the cap to at least the size the summary names: SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE (the monitor enforces it; restart it), or alter system set max_slot_wal_keep_size = '<size>'; select pg_reload_conf(); in check-only mode.",
      'Otherwise confirm more often: lower offset.flush.interval.ms of the Connect worker and heartbeat.interval.ms of the connector, and set SLOT_MONITOR_OFFSET_FLUSH_INTERVAL_MS / SLOT_MONITOR_HEARTBEAT_INTERVAL_MS to match.',
      'Find what wrote the burst (a bulk load, a reindex, a vacuum full): select query, wal_bytes from pg_stat_statements order by wal_bytes desc limit 10; (if installed).',
    ],
  },
  StandbySlotNotSynchronized: {
    severity: 'critical',
    runbook: [
      'A standby of the seat database has no usable copy of a failover slot (missing, not synchronized, not yet sync-ready, or invalidated; the description says which). Nothing is lost now, but a failover to that standby could not carry the connector over: it would need the lost-slot recovery.',
      'On the standby: select slot_name, synced, temporary, failover, invalidation_reason from pg_replication_slots; and show sync_replication_slots; show hot_standby_feedback; show primary_slot_name; (primary_conninfo must name a dbname).',
      "On the primary: the slot must have failover = true (the connector's CONNECTOR_SLOT_FAILOVER=yes when the slot was created; an old slot keeps failover = false: recreate it with the lost-slot recovery at a quiet time), and synchronized_standby_slots must name the standby's physical slot.",
      "Right after the slot is created or the standby starts, the copy is temporary until the primary's slot passes the standby's position: it resolves by itself within a minute or two of writes.",
    ],
  },
  StandbySlotBehind: {
    severity: 'warning',
    runbook: [
      "The standby's copy of a failover slot trails the primary's confirmed position by more than SLOT_MONITOR_STANDBY_SLOT_MAX_LAG. A failover now resumes from further back: more WAL to decode again and more duplicates for the consumers to drop; nothing is lost.",
      'Check the standby replays WAL (select status, latest_end_lsn from pg_stat_wal_receiver;) and its log for "could not synchronize replication slot".',
      'A standby far behind on replay is the cause: look at its disk and CPU, and at pg_stat_replication on the primary.',
    ],
  },
  SlotKeepSizeCorrected: {
    severity: 'info',
    runbook: [
      "The monitor found max_slot_wal_keep_size differing from its target and set it with ALTER SYSTEM and pg_reload_conf(): to the target, or, for -1 while a slot retains more than the target, to that slot's retained WAL plus the margin (SlotKeepSizeRaised fires meanwhile). After an emergency raise it is the target coming back once the slots caught up. Nothing to do unless the change was unexpected.",
      'Find who changed it: ALTER SYSTEM writes postgresql.auto.conf; configuration management may be fighting the monitor.',
    ],
  },
  SlotKeepSizeRaised: {
    severity: 'warning',
    runbook: [
      "max_slot_wal_keep_size stands above the monitor's target because a slot retains more WAL than the target minus SLOT_MONITOR_KEEP_SIZE_MARGIN: setting the target now would invalidate that slot at the next checkpoint, so the monitor holds the raise (an operator's ALTER SYSTEM, or its own cap in place of -1). The summary names the slot and the size every slot must fall to.",
      ...STOPPED_READER_STEPS,
      "Watch the disk that holds pg_wal: the slot may now keep up to the raised cap there. If the disk cannot hold it, lower the cap yourself knowing the slot will be lost (alter system set max_slot_wal_keep_size = '<size>'; select pg_reload_conf();) and follow SlotLost.",
      'Nothing to undo: once every slot retains at most the size the summary names, the monitor sets the target back (SlotKeepSizeCorrected) and this resolves. In check-only mode set it back yourself then. A raise meant to last belongs in SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE.',
    ],
  },
  SlotKeepSizeMismatch: {
    severity: 'warning',
    runbook: [
      "max_slot_wal_keep_size on the seat database differs from the monitor's target and the monitor did not change it (check-only mode, or the change failed).",
      "At -1 (unlimited) a dead slot can fill the disk and stop the database. Set it: alter system set max_slot_wal_keep_size = '<target>'; select pg_reload_conf(); but when the description names a larger value (a slot retains more than the target), set that one: a cap below a slot's retained WAL invalidates the slot.",
      'If the monitor runs in enforce mode, check its role has GRANT ALTER SYSTEM ON PARAMETER max_slot_wal_keep_size and EXECUTE on pg_reload_conf().',
    ],
  },
  SlotMonitorDatabaseUnreachable: {
    severity: 'critical',
    runbook: [
      'The slot monitor cannot query the seat database, so nobody sees the replication slots right now; slot alerts that were firing stay firing.',
      'Check the database is up (pg_isready -h <host> -p <port>) and accepts the monitor role (its log names the refusal).',
      'If the database is down, that is the bigger incident; if only the monitor is refused, fix its credentials or pg_hba.conf.',
    ],
  },
  Watchdog: {
    severity: 'none',
    runbook: [
      "Always firing while the slot monitor runs, so that its silence is noticed. Route it to a dead man's switch that pages when it STOPS arriving.",
      'If it stopped: the monitor process is dead or cannot reach Alertmanager. Check the process (systemctl status / kubectl get pods) and its log.',
    ],
  },
} as const satisfies Record<string, AlertDefinition>;

export type AlertName = keyof typeof ALERTS;

export const ALERT_NAMES = Object.keys(ALERTS) as AlertName[];
