/**
 * How often the stack confirms a position to the Debezium replication slot. Postgres can recycle
 * WAL only up to the slot's confirmed position, and that position moves when Kafka Connect flushes
 * the connector's offsets, for a position Debezium has reached: through an outbox event or, when
 * the outbox is quiet, through a heartbeat. So an active slot retains at most about
 * WAL rate × (offset flush interval + heartbeat interval), and a burst of WAL written outside the
 * publication (a bulk load, a VACUUM FULL) during that window is what the cap
 * (max_slot_wal_keep_size) must hold. Short intervals keep that a small fraction of the cap: at
 * 20 MB/s of WAL, two seconds retain about 40 MB, 1% of a 4GB cap.
 *
 * The stack's Connect worker (stack/connect.ts, docker-compose.yml) and the connector's
 * HEARTBEAT_INTERVAL_MS default use these values; the slot monitor reads them to warn when the cap
 * is too small for the database's WAL rate.
 */

/** The stack's Connect worker `offset.flush.interval.ms` (Kafka's default is 60 s). */
export const OFFSET_FLUSH_INTERVAL_MS = 1000;

/** The connector's default `heartbeat.interval.ms` (HEARTBEAT_INTERVAL_MS). */
export const HEARTBEAT_INTERVAL_MS = 1000;
