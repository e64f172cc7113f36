/** Sales through the real seat service: each order holds two seats and confirms (5 events). */
import { createShow, seatId } from '../../../seat-service/inventory.js';
import type { SeatService } from '../../../seat-service/service.js';
import { sleep } from '../../../lib/wait.js';

const SHOW = 'arena';
const SEATS_PER_ROW = 10;

export async function createArena(service: SeatService): Promise<void> {
  await createShow(service.pool, {
    showId: SHOW,
    title: 'Arena night',
    startsAt: new Date('2027-06-01T20:00:00Z'),
    onSaleAt: new Date('2026-12-01T10:00:00Z'),
    sections: [{ section: 'A', rows: 12, seatsPerRow: SEATS_PER_ROW, priceCents: 4500 }],
  });
}

/** Seat n (0-based) of the arena. */
function seat(n: number): string {
  return seatId(SHOW, 'A', Math.floor(n / SEATS_PER_ROW) + 1, (n % SEATS_PER_ROW) + 1);
}

/** Order number `order` takes seats 2·order and 2·order+1: seat.held ×2, seat.sold ×2, order.confirmed. */
export async function sellOrder(service: SeatService, order: number): Promise<void> {
  const held = await service.hold({
    showId: SHOW,
    seatIds: [seat(2 * order), seat(2 * order + 1)],
    buyerId: `buyer-${order}`,
  });
  if (held.status !== 'held') throw new Error(`order ${order}: hold refused (${held.status})`);
  const confirmed = await service.confirm({ holdId: held.holdId, buyerEmail: `buyer-${order}@example.test` });
  if (confirmed.status !== 'confirmed') throw new Error(`order ${order}: confirm refused (${confirmed.status})`);
}

/** A hold left open on seat n: one seat.held event, the seat stays held. */
export async function holdOnly(service: SeatService, n: number): Promise<void> {
  const held = await service.hold({ showId: SHOW, seatIds: [seat(n)], buyerId: `holder-${n}` });
  if (held.status !== 'held') throw new Error(`seat ${n}: hold refused (${held.status})`);
}

/** Sells orders one after another until stopped (or `max` orders): traffic while the recovery runs. */
export function sellInBackground(
  service: SeatService,
  firstOrder: number,
  max: number,
): { stop: () => Promise<number> } {
  let stopping = false;
  let sold = 0;
  const loop = (async () => {
    while (!stopping && sold < max) {
      await sellOrder(service, firstOrder + sold);
      sold += 1;
      await sleep(250); // pacing the traffic, not waiting for anything
    }
  })();
  return {
    stop: async () => {
      stopping = true;
      await loop;
      return sold;
    },
  };
}
