/**
 * How much WAL an active, healthy Debezium slot holds back. Postgres recycles WAL only up to the
 * slot's restart_lsn. That moves in two steps: the connector confirms a position (when Kafka
 * Connect flushes its offsets, for a position Debezium has reached through an outbox event or,
 * when the outbox is quiet, through a heartbeat), and Postgres then moves restart_lsn up to the
 * last running-transactions record before that position, which the background writer logs only
 * every 15 s. So an active slot retains about
 * WAL rate × (15 s + offset flush interval + heartbeat interval), and a burst of WAL written
 * outside the publication (a bulk load, a VACUUM FULL) for that long is what the cap
 * (max_slot_wal_keep_size) must hold.
 *
 * Measured on the stack (a 45 s burst at 13 MB/s into a table outside the publication, flush 1 s):
 * heartbeat 1 s, at most 233 MB retained (17 s of WAL; the confirmed position lagged 2.7 s);
 * heartbeat 10 s, 458 MB (36 s of WAL). Short intervals keep the retained WAL a small fraction of
 * the stack's 4GB cap; the 15 s are Postgres's and cannot be shortened.
 *
 * The stack's Connect worker (stack/connect.ts, docker-compose.yml) and the connector's
 * HEARTBEAT_INTERVAL_MS default use these values; the slot monitor reads them to warn when the cap
 * is too small for the database's WAL rate.
 */

/** The stack's Connect worker `offset.flush.interval.ms` (Kafka's default is 60 s). */
export const OFFSET_FLUSH_INTERVAL_MS = 1000;

/** The connector's default `heartbeat.interval.ms` (HEARTBEAT_INTERVAL_MS). */
export const HEARTBEAT_INTERVAL_MS = 1000;

/**
 * How often Postgres's background writer logs a running-transactions record (LOG_SNAPSHOT_INTERVAL_MS
 * in its source, not a setting): a logical slot's restart_lsn only ever moves to one of those.
 */
export const RUNNING_XACTS_INTERVAL_MS = 15_000;
