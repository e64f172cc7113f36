/**
 * Every replication slot alert: raised by the slot monitor in process (slot-conditions.ts,
 * keep-size.ts, standby-slots.ts, wal-rate.ts, slot-source.ts) and by Prometheus from its metrics
 * (slot-alerts.rules.yml, generated from here). The thresholds in the exprs are the monitor's
 * defaults (0.5 and 0.2 of the cap, 5 minutes inactive, 64 MB of growth over 15 minutes).
 */
import { alert } from './alert-spec.js';

const GROUP = 'slot-monitor';
const SLOT = '{{ $labels.slot_name }}';
const BYTES = '{{ $value | humanize1024 }}B';

export const SLOT_ALERTS = {
  SlotWalExtended: alert<{ slot: string; retained?: string }>({
    severity: 'warning',
    raisedBy: 'slot-monitor',
    summary: ({ slot, retained }) =>
      `Replication slot ${slot} holds ${retained === undefined ? 'more WAL' : `${retained} of WAL, more`} than max_wal_size: its reader is behind or stopped.`,
    rule: { group: GROUP, expr: 'slot_monitor_slot_wal_status{wal_status="extended"} == 1', summary: { slot: SLOT } },
    meaning: 'The slot holds more WAL than `max_wal_size`: its reader is behind or stopped. Nothing is lost yet.',
    steps: [
      'Find the connector. If it is `FAILED` or `STOPPED`, read the task trace (`status.tasks[].trace`), fix the cause, and restart it: `curl -X POST -u "$CONNECT_USERNAME:$CONNECT_PASSWORD" "$CONNECT_URL/connectors/<name>/restart?includeTasks=true&onlyFailed=true"` (or `curl -X PUT -u "$CONNECT_USERNAME:$CONNECT_PASSWORD" $CONNECT_URL/connectors/<name>/resume`).',
      'Watch retained WAL fall: `select slot_name, active, wal_status, safe_wal_size from pg_replication_slots;`',
      'If the reader cannot be fixed before `safe_wal_size` reaches 0, prepare the [lost-slot recovery](recovery.md).',
    ],
  }),
  SlotWalUnreserved: alert<{ slot: string }>({
    severity: 'critical',
    raisedBy: 'slot-monitor',
    summary: ({ slot }) =>
      `Replication slot ${slot} is past max_slot_wal_keep_size: the next checkpoint invalidates it and CDC events will be lost.`,
    rule: { group: GROUP, expr: 'slot_monitor_slot_wal_status{wal_status="unreserved"} == 1', summary: { slot: SLOT } },
    meaning:
      'The slot is past `max_slot_wal_keep_size`. The next checkpoint (at most `checkpoint_timeout` away, sooner under write load) invalidates it, and the events in that WAL can no longer be streamed.',
    steps: [
      'If the disk has room, [raise the cap](#raising-the-cap-to-save-a-slot): the slot goes back to `extended` and the monitor holds the raise until the slot has caught up. Do **not** raise it without the room: a full disk stops every sale, which is worse than re-emitting events.',
      'Find the connector and get it reading again (as for [SlotWalExtended](#slotwalextended)). If it catches up before the checkpoint, the alert resolves.',
      'If the slot becomes lost, follow [SlotLost](#slotlost).',
    ],
  }),
  SlotLost: alert<{ slot: string }>({
    severity: 'critical',
    raisedBy: 'slot-monitor',
    summary: ({ slot }) =>
      `Replication slot ${slot} is LOST: the WAL it needed is gone and Debezium cannot continue; follow the lost-slot recovery.`,
    rule: { group: GROUP, expr: 'slot_monitor_slot_wal_status{wal_status="lost"} == 1', summary: { slot: SLOT } },
    meaning:
      'The slot was invalidated: the WAL it needed has been removed, and Debezium can never stream from it again (it retries for about 30 minutes, then fails; `npm run connector -- status` already reports it as failing). The events are **not** gone from the system: they are still rows of the outbox table, and the outbox purge deletes nothing while the slot is lost ([the purge](seat-service.md#outbox-retention-and-the-purge)).',
    steps: [
      "Run the recovery now: `npm run slot-recovery -- --since auto` prints the plan, `npm run slot-recovery -- --since auto --apply` carries it out and waits until every consumer's inbox has every re-emitted row ([Lost-slot recovery](recovery.md)).",
      '`npm run reconcile` confirms no consumer misses an event.',
      'When the command cannot run, follow [the manual steps](recovery.md#recovering-a-lost-slot-by-hand).',
    ],
    after: 'The alert resolves when the lost slot is dropped and a healthy one of the same name exists.',
  }),
  SlotHeadroomLow: alert<{ slot: string; left: string }>({
    severity: 'warning',
    raisedBy: 'slot-monitor',
    summary: ({ slot, left }) =>
      `Replication slot ${slot} has ${left} of WAL headroom left: its reader is not keeping up.`,
    rule: {
      group: GROUP,
      expr: `(
  slot_monitor_slot_safe_wal_size_bytes
    < on (job, instance) group_left ()
  (0.5 * slot_monitor_max_slot_wal_keep_size_bytes > 0)
)
unless on (job, instance, slot_name)
(
  slot_monitor_slot_safe_wal_size_bytes
    < on (job, instance) group_left ()
  (0.2 * slot_monitor_max_slot_wal_keep_size_bytes > 0)
)`,
      summary: { slot: SLOT, left: BYTES },
    },
    meaning:
      '`safe_wal_size` is below `SLOT_MONITOR_HEADROOM_WARNING_FRACTION` (default 0.5) of `max_slot_wal_keep_size`: the slot is heading for unreserved, then lost. A slot that reserves no WAL (`wal_status` null, e.g. a physical slot made without `immediately_reserve`) never raises it.',
    steps: [
      'Find the connector; a stopped or failed one is fixed as for [SlotWalExtended](#slotwalextended).',
      'If it is running but slow, look at its task lag and the Kafka broker; a heavy write burst on the seat database (the 10:00 on-sale) also shows up here and passes when the burst does. If bursts bring it often, see [SlotCapTooSmallForWalRate](#slotcaptoosmallforwalrate).',
    ],
  }),
  SlotHeadroomCritical: alert<{ slot: string; left: string }>({
    severity: 'critical',
    raisedBy: 'slot-monitor',
    summary: ({ slot, left }) =>
      `Replication slot ${slot} has ${left} of WAL headroom left before it passes max_slot_wal_keep_size.`,
    rule: {
      group: GROUP,
      expr: `slot_monitor_slot_safe_wal_size_bytes
  < on (job, instance) group_left ()
(0.2 * slot_monitor_max_slot_wal_keep_size_bytes > 0)`,
      summary: { slot: SLOT, left: BYTES },
    },
    meaning:
      'As [SlotHeadroomLow](#slotheadroomlow), below `SLOT_MONITOR_HEADROOM_CRITICAL_FRACTION` (default 0.2); only one of the two fires at a time.',
    steps: [
      'Follow [SlotHeadroomLow](#slotheadroomlow).',
      'If the reader cannot be fixed in time and the disk has room, [raise the cap](#raising-the-cap-to-save-a-slot); otherwise prepare the [lost-slot recovery](recovery.md).',
    ],
  }),
  SlotInactive: alert<{ slot: string; duration: string }>({
    severity: 'warning',
    raisedBy: 'slot-monitor',
    summary: ({ slot, duration }) =>
      `Nobody has read replication slot ${slot} for ${duration}: the CDC connector is down and WAL piles up.`,
    rule: {
      group: GROUP,
      expr: 'slot_monitor_slot_inactive_seconds > 300',
      summary: { slot: SLOT, duration: '{{ $value | humanizeDuration }}' },
    },
    meaning:
      'No process has read the slot for longer than `SLOT_MONITOR_INACTIVE_ALERT_AFTER_MS` (default 5 minutes): the connector is down and WAL piles up.',
    steps: [
      'Find the connector and start it again (as for [SlotWalExtended](#slotwalextended)).',
      "If the slot belongs to nothing any more (an old, deleted connector), drop it: `select pg_drop_replication_slot('<slot>');` — an abandoned slot is exactly what fills a disk.",
    ],
  }),
  SlotMissing: alert<{ slot: string }>({
    severity: 'critical',
    raisedBy: 'slot-monitor',
    summary: ({ slot }) => `Replication slot ${slot} does not exist: no CDC events are being captured for it.`,
    rule: { group: GROUP, expr: 'slot_monitor_slot_present == 0', summary: { slot: SLOT } },
    meaning:
      'A slot listed in `SLOT_MONITOR_SLOTS` does not exist: nothing captures outbox rows, and when the connector creates the slot again it starts from that moment, skipping what was written in between.',
    steps: [
      'Find out who dropped it (the database log records `pg_drop_replication_slot`), or whether the connector was deleted.',
      'If the connector still exists, `npm run slot-recovery -- --since auto --apply` treats a missing slot like a lost one: it recreates the slot through the connector and re-emits what was written meanwhile ([Lost-slot recovery](recovery.md)).',
      'If the connector was deleted, apply it again (`npm run connector -- apply`), then run the recovery as in step 2.',
      'Right after a failover of the seat database, a promoted standby without a synchronized copy of the slot has none: follow [failover](failover.md) (on Postgres 15/16, `npm run slot-recovery -- --after-failover`).',
    ],
  }),
  SlotWalGrowingWithoutOutboxWrites: alert<{ slot: string }>({
    severity: 'warning',
    raisedBy: 'slot-monitor',
    summary: ({ slot }) =>
      `Replication slot ${slot} keeps growing while nothing is written to the outbox: the connector heartbeat is not advancing the slot.`,
    rule: {
      group: GROUP,
      expr: `(delta(slot_monitor_slot_retained_wal_bytes[15m]) > 64 * 1024 * 1024)
and on (job, instance, slot_name) (slot_monitor_slot_active == 1)
and on (job, instance) (changes(slot_monitor_outbox_rows_inserted[15m]) == 0)`,
      summary: { slot: SLOT },
    },
    meaning:
      "The slot's reader is connected, but over `SLOT_MONITOR_GROWTH_WINDOW_POLLS` polls its retained WAL only grew (by at least `SLOT_MONITOR_GROWTH_MIN_BYTES`) while the outbox got no insert. Debezium confirms progress only when it handles an event of a captured table or a heartbeat, so a quiet outbox on a busy database makes the slot grow: the connector heartbeat is missing or broken.",
    steps: [
      'Check the connector has `heartbeat.interval.ms` and a `heartbeat.action.query` that writes through `pg_logical_emit_message` (a heartbeat **table** breaks the outbox router: "Unable to find payload field").',
      'Check in the connector log that heartbeats are emitted. Retained WAL should fall within `offset.flush.interval.ms` once they are, and the alert resolves.',
    ],
  }),
  SlotCapTooSmallForWalRate: alert<{ cap?: string; burst: string; suggested: string }>({
    severity: 'warning',
    raisedBy: 'slot-monitor',
    summary: ({ cap, burst, suggested }) =>
      `max_slot_wal_keep_size${cap === undefined ? '' : ` (${cap})`} is smaller than the ${burst} of WAL this database wrote at its peak between two confirmations of an active slot: raise SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE to at least ${suggested}.`,
    rule: {
      group: GROUP,
      expr: `slot_monitor_wal_burst_between_confirmations_bytes
  > on (job, instance)
(slot_monitor_max_slot_wal_keep_size_bytes > 0)`,
      summary: { burst: BYTES, suggested: BYTES },
    },
    meaning:
      "The database has written WAL fast enough that a burst like it would take more than `max_slot_wal_keep_size` between two confirmations of an active slot: peak rate × (15 s + `SLOT_MONITOR_OFFSET_FLUSH_INTERVAL_MS` + `SLOT_MONITOR_HEARTBEAT_INTERVAL_MS`) × `SLOT_MONITOR_WAL_BURST_MARGIN` (default 2). A slot's restart position moves only when Connect flushes offsets after Debezium confirmed a position (an outbox event or a heartbeat), and then only to a running-transactions record, which Postgres logs every 15 s; so a bulk write into any other table can push a healthy, active, keeping-up slot past the cap, and the next checkpoint loses it. The peak is the highest rate between two polls within `SLOT_MONITOR_WAL_RATE_WINDOW_MS` (default 24 h); the summary names the cap that would be enough. Nothing is lost yet. It resolves when the cap is raised (or the peak leaves the window).",
    steps: [
      'If the disk has room, raise the cap to at least the size the summary names: `SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE` (the monitor enforces it; restart the monitor), and `STACK_POSTGRES_MAX_SLOT_WAL_KEEP_SIZE` / `stack/postgres.conf` for the stack.',
      "Or have the slot confirmed more often: lower the Connect worker's `offset.flush.interval.ms` and the connector's `heartbeat.interval.ms`, and set `SLOT_MONITOR_OFFSET_FLUSH_INTERVAL_MS` / `SLOT_MONITOR_HEARTBEAT_INTERVAL_MS` to match (their defaults are the stack's values).",
      'Find what wrote the burst (a bulk load, `vacuum full`, a reindex) and whether it will come again (`pg_stat_statements.wal_bytes`, if installed).',
    ],
  }),
  SlotKeepSizeCorrected: alert<{ from: string; to: string }>({
    severity: 'info',
    raisedBy: 'slot-monitor',
    summary: ({ from, to }) =>
      `The slot monitor changed max_slot_wal_keep_size from ${from} to ${to} on the seat database.`,
    meaning:
      "The monitor found `max_slot_wal_keep_size` differing from `SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE` (for instance the default `-1`, unlimited) and set it with `ALTER SYSTEM` and `pg_reload_conf()`. The summary says from what to what: to the target; or, for `-1` while a slot retains more than the target, to that slot's retained WAL plus the margin (with [SlotKeepSizeRaised](#slotkeepsizeraised)); or back to the target after a [raise](#raising-the-cap-to-save-a-slot), once every slot had caught up. It stays firing for `SLOT_MONITOR_NOTICE_DURATION_MS` (default 15 minutes), then resolves by itself.",
    steps: [
      'Nothing to do if the change was expected (a new database, a first deploy).',
      'If it happens again and again, something else sets the value back (configuration management, a person): `ALTER SYSTEM` writes `postgresql.auto.conf`, which wins over `postgresql.conf`. Decide who owns the setting.',
    ],
  }),
  SlotKeepSizeRaised: alert<{
    ownCap?: boolean;
    cap?: string;
    above: string;
    target?: string;
    because: string;
    restore: string;
  }>({
    severity: 'warning',
    raisedBy: 'slot-monitor',
    summary: ({ ownCap, cap, above, target, because, restore }) =>
      ownCap
        ? `The slot monitor capped the unlimited max_slot_wal_keep_size at ${cap}, ${above} above its target ${target}, because ${because}; ${restore}.`
        : `max_slot_wal_keep_size is raised${cap === undefined ? '' : ` to ${cap}`}, ${above} above the ${target === undefined ? "slot monitor's target" : `target ${target}`}, and kept there because ${because}; ${restore}.`,
    rule: {
      group: GROUP,
      expr: `(slot_monitor_max_slot_wal_keep_size_bytes - on (job, instance) slot_monitor_max_slot_wal_keep_size_target_bytes)
and on (job, instance) (slot_monitor_keep_size_raise_held == 1)`,
      summary: {
        above: BYTES,
        because: 'a slot retains more WAL than the target minus the margin',
        restore: 'the monitor (in enforce mode) restores the target once every slot is at most that',
      },
    },
    meaning:
      "`max_slot_wal_keep_size` stands above the target, and the monitor keeps it there because a slot retains more WAL than the target minus `SLOT_MONITOR_KEEP_SIZE_MARGIN`: setting the target now would invalidate that slot at the next checkpoint. Either someone [raised the cap](#raising-the-cap-to-save-a-slot) to save a slot, or the monitor found `-1` and capped it at the largest slot's retained WAL plus the margin instead of the target. The summary says the cap, how much above the target it is, which slot retains what, and the size every slot must fall to; the description lists every slot in need with its `wal_status` and `safe_wal_size`. Prometheus raises it from `slot_monitor_keep_size_raise_held`.",
    steps: [
      "Get the slot's reader going: find the connector and restart it (as for [SlotWalExtended](#slotwalextended)), then watch retained WAL fall.",
      "Watch the disk that holds `pg_wal`: the slot may keep up to the raised cap there. If the disk cannot hold it, lower the cap yourself, knowing the slot will be lost (`alter system set max_slot_wal_keep_size = '<size>'; select pg_reload_conf();`), and follow [SlotLost](#slotlost).",
      'Nothing to undo: once every slot retains at most the size the summary names, the monitor sets the target back ([SlotKeepSizeCorrected](#slotkeepsizecorrected)) and this resolves. In check-only mode the monitor changes nothing: set it back yourself then.',
      "A slot that belongs to nothing any more keeps the cap raised until it is lost: drop it (`select pg_drop_replication_slot('<slot>');`).",
    ],
  }),
  SlotKeepSizeMismatch: alert<{ current: string; target?: string; uncapped: (clause: string) => string }>({
    severity: 'warning',
    raisedBy: 'slot-monitor',
    summary: ({ current, target, uncapped }) =>
      `max_slot_wal_keep_size is ${current} on the seat database, not the ${target === undefined ? "slot monitor's target" : `required ${target}`}.${uncapped(' With no cap, a dead slot can fill the disk and stop the seat database.')}`,
    rule: {
      group: GROUP,
      expr: `(slot_monitor_max_slot_wal_keep_size_bytes != on (job, instance) slot_monitor_max_slot_wal_keep_size_target_bytes)
unless on (job, instance) (slot_monitor_keep_size_raise_held == 1)`,
      for: '5m',
      summary: { current: BYTES, uncapped: (clause) => `{{ if lt $value 0.0 }}${clause}{{ end }}` },
    },
    meaning:
      '`max_slot_wal_keep_size` differs from the target and the monitor did not change it: it runs with `SLOT_MONITOR_KEEP_SIZE_MODE=check`, or setting it failed (the description says why). At `-1` a dead slot can fill the disk and stop the seat database. A raise held for a slot in need is [SlotKeepSizeRaised](#slotkeepsizeraised) instead.',
    steps: [
      "Set it to the target (default 4GB, the stack's value): `alter system set max_slot_wal_keep_size = '4GB'; select pg_reload_conf();`. When the description names a larger value (the setting is `-1` and a slot retains more than the target), set that one instead: a cap below a slot's retained WAL invalidates the slot.",
      "In enforce mode, check the role's grants ([the monitor's role](slot-monitor.md#the-monitors-role)): `GRANT ALTER SYSTEM ON PARAMETER max_slot_wal_keep_size` and `EXECUTE` on `pg_reload_conf()` in the seat database.",
    ],
  }),
  SlotMonitorDatabaseUnreachable: alert<{ where?: string }>({
    severity: 'critical',
    raisedBy: 'slot-monitor',
    summary: ({ where }) =>
      `The slot monitor cannot reach the seat database${where === undefined ? '' : ` ${where}`}, so it cannot see the replication slots.`,
    rule: { group: GROUP, expr: 'slot_monitor_database_up == 0', for: '1m', summary: {} },
    meaning:
      'The monitor cannot query the seat database, so nobody sees the replication slots. Slot alerts that were firing stay firing (nobody knows they cleared) until the monitor can look again.',
    steps: [
      '`pg_isready -h <host> -p <port>`: if the database is down, that is the bigger incident.',
      'If only the monitor is refused, its log says why (password, `pg_hba.conf`, too many connections); fix the role or its credentials.',
    ],
  }),
  SlotMonitorDown: alert({
    severity: 'critical',
    summary: () => 'Prometheus cannot scrape the slot monitor: nobody is watching the replication slots.',
    rule: {
      group: GROUP,
      expr: 'up{job="slot-monitor"} == 0 or absent(up{job="slot-monitor"})',
      for: '2m',
      summary: {},
    },
    meaning:
      "Prometheus cannot scrape the slot monitor, or has no `slot-monitor` scrape job at all: nobody is watching the replication slots. The monitor's own [Watchdog](#watchdog) stops arriving at the dead man's switch at about the same time.",
    steps: [
      'Check the monitor process (`systemctl status`, `kubectl get pods`, …) and its last log lines; a bad setting stops it at start with one sentence naming the variable.',
      'If it runs, check Prometheus reaches its `/metrics` (`SLOT_MONITOR_METRICS_HOST`:`SLOT_MONITOR_METRICS_PORT`, 9188 by default).',
    ],
  }),
  StandbySlotNotSynchronized: alert<{ slot: string; standby: string }>({
    severity: 'critical',
    raisedBy: 'slot-monitor',
    summary: ({ slot, standby }) =>
      `Replication slot ${slot} is not synchronized to the standby ${standby}: after a failover to it the connector could not resume.`,
    rule: {
      group: GROUP,
      expr: 'slot_monitor_standby_slot_synced == 0',
      for: '2m',
      summary: { slot: SLOT, standby: '{{ $labels.standby }}' },
    },
    meaning:
      "With standbys (`SLOT_MONITOR_STANDBY_URLS`, Postgres 17+, the stack's `STACK_POSTGRES_STANDBY=yes`), a standby has no usable copy of a failover slot of the primary: missing, not synchronized, not yet sync-ready (`temporary`), or invalidated; the description says which. Nothing is lost now, but a failover to that standby could not carry the connector over and would need the lost-slot recovery.",
    steps: [
      'On the standby: `select slot_name, synced, temporary, failover, invalidation_reason from pg_replication_slots;` and `show sync_replication_slots; show hot_standby_feedback; show primary_slot_name;` (`primary_conninfo` must name a `dbname`).',
      "On the primary the slot must have `failover = true`: the connector creates it so with `CONNECTOR_SLOT_FAILOVER=yes` (an older slot keeps `false`), and `synchronized_standby_slots` must name the standby's physical slot.",
      "Right after the slot is created or the standby starts, the copy stays `temporary` until the primary's slot passes the standby's position; with writes going on it resolves by itself within a minute or two.",
    ],
  }),
  StandbySlotBehind: alert<{ slot: string; standby: string; lag: string }>({
    severity: 'warning',
    raisedBy: 'slot-monitor',
    summary: ({ slot, standby, lag }) =>
      `The standby ${standby}'s copy of replication slot ${slot} is ${lag} behind the primary's: after a failover to it the connector would resume from that far back (more to decode again, and duplicates if its offsets are lost).`,
    rule: {
      group: GROUP,
      expr: 'slot_monitor_standby_slot_lag_bytes > 64 * 1024 * 1024',
      for: '5m',
      summary: { slot: SLOT, standby: '{{ $labels.standby }}', lag: BYTES },
    },
    meaning:
      "A standby's copy of a failover slot trails the primary's `confirmed_flush_lsn` by more than `SLOT_MONITOR_STANDBY_SLOT_MAX_LAG` (default 64MB; 64 MiB in the rule). A failover now resumes from further back: more WAL to decode again and more duplicates for the consumers to drop; nothing is lost.",
    steps: [
      'Check the standby replays WAL (`select status, latest_end_lsn from pg_stat_wal_receiver;`) and its log for "could not synchronize replication slot".',
      'A standby far behind on replay is the cause: look at its disk and CPU, and at `pg_stat_replication` on the primary.',
    ],
  }),
} as const;
