import type { Logger } from '../lib/logger.js';
import type { Pool } from '../lib/postgres.js';

/**
 * Deletes outbox rows older than the retention, `batchSize` rows per statement, until none are
 * left. The publication publishes inserts only, so these deletes never reach Kafka.
 */
export async function purgeOutbox(pool: Pool, options: { retentionMs: number; batchSize: number; logger: Logger }): Promise<number> {
  let total = 0;
  for (;;) {
    const { rowCount } = await pool.query(
      /* sql */ `delete from outbox where id in (
         select id from outbox where created_at < now() - make_interval(secs => $1::double precision / 1000)
          order by created_at limit $2)`,
      [options.retentionMs, options.batchSize],
    );
    total += rowCount ?? 0;
    if ((rowCount ?? 0) < options.batchSize) break;
  }
  options.logger.info({ purged: total, retentionMs: options.retentionMs }, 'outbox purge finished');
  return total;
}
