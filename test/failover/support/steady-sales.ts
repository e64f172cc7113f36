/**
 * Orders sold one after another at a steady pace through the real seat service (sellOrder: two
 * seats held and confirmed, 5 events each), until stopped, `max` orders, or the first failure
 * (the primary killed under it): what was acknowledged, and the order in flight when it failed.
 */
import { sleep } from '../../../lib/wait.js';
import type { SeatService } from '../../../seat-service/service.js';
import { sellOrder } from '../../slot-recovery/support/seat-sales.js';

export interface SteadySales {
  /** Order numbers the seat service confirmed, in order. */
  acknowledged: number[];
  /** The order that failed (and stopped the sales), if one did. */
  failed(): { order: number; error: unknown } | undefined;
  stop(): Promise<void>;
}

export function sellSteadily(service: SeatService, firstOrder: number, max: number, paceMs = 100): SteadySales {
  const acknowledged: number[] = [];
  let failure: { order: number; error: unknown } | undefined;
  let stopping = false;
  const loop = (async () => {
    for (let order = firstOrder; !stopping && order < firstOrder + max; order += 1) {
      try {
        await sellOrder(service, order);
        acknowledged.push(order);
      } catch (error) {
        failure = { order, error };
        return;
      }
      await sleep(paceMs); // the pace of the load, not a wait for anything
    }
  })();
  return {
    acknowledged,
    failed: () => failure,
    stop: async () => {
      stopping = true;
      await loop;
    },
  };
}
