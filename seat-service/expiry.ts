import type { Logger } from '../lib/logger.js';
import type { Pool } from '../lib/postgres.js';
import { withTransaction } from '../lib/postgres.js';
import type { EventWriter } from './event-writer.js';
import { ACTIVE_SEATS_OF_HOLD, type HoldSeat, endHoldAsAvailable } from './hold-endings.js';
import { CONTENTION_RETRIES } from './holds.js';

interface DueHold {
  hold_id: string;
  show_id: string;
  seats: HoldSeat[];
}

/**
 * Expires up to `limit` active holds whose time is up, in one transaction: their seats become
 * available and each gets a hold-expired event. Holds being confirmed or released right now are
 * skipped (SKIP LOCKED) and picked up by the next run if still due. Returns how many expired.
 */
export function expireDueHolds(
  pool: Pool,
  events: EventWriter,
  options: { limit: number; logger?: Logger },
): Promise<number> {
  return withTransaction(
    pool,
    async (client) => {
      const { rows } = await client.query<DueHold>(
        /* sql */ `select h.hold_id, h.show_id,
            ${ACTIVE_SEATS_OF_HOLD} as seats
           from holds h
          where h.status = 'active' and h.expires_at <= now()
          order by h.expires_at
          limit $1
          for update of h skip locked`,
        [options.limit],
      );
      for (const hold of rows) await endHoldAsAvailable(client, events, hold, 'expired');
      return rows.length;
    },
    { retries: CONTENTION_RETRIES, logger: options.logger },
  );
}
