/**
 * Sales at a steady pace through the real seat service, going on through a failover: an order that
 * fails (the primary is gone) is counted and the next one is tried; `switchTo` moves the seller to
 * the seat service of the new primary. Each order holds two seats and confirms (5 events).
 */
import { createShow, seatId } from '../../../seat-service/inventory.js';
import type { SeatService } from '../../../seat-service/service.js';
import { sleep } from '../../../lib/wait.js';

const SEATS_PER_ROW = 10;
const ROWS = 60;

export async function createFailoverShow(service: SeatService, show: string): Promise<void> {
  await createShow(service.pool, {
    showId: show,
    title: `${show} night`,
    startsAt: new Date('2027-06-01T20:00:00Z'),
    onSaleAt: new Date('2026-12-01T10:00:00Z'),
    sections: [{ section: 'A', rows: ROWS, seatsPerRow: SEATS_PER_ROW, priceCents: 4500 }],
  });
}

export interface PacedSales {
  /** Orders confirmed (the seat service said so). */
  confirmedHoldIds(): string[];
  failures(): number;
  switchTo(service: SeatService): void;
  /** Resolves once `count` more orders are confirmed from now on. */
  untilConfirmed(count: number): Promise<void>;
  stop(): Promise<void>;
}

export function sellAtPace(first: SeatService, show: string, paceMs: number): PacedSales {
  let service = first;
  let stopping = false;
  let failed = 0;
  const confirmed: string[] = [];
  const seat = (n: number) => seatId(show, 'A', Math.floor(n / SEATS_PER_ROW) + 1, (n % SEATS_PER_ROW) + 1);
  const sellOne = async (order: number) => {
    const held = await service.hold({
      showId: show,
      seatIds: [seat(2 * order), seat(2 * order + 1)],
      buyerId: `buyer-${order}`,
    });
    if (held.status !== 'held') throw new Error(`order ${order}: hold refused (${held.status})`);
    const done = await service.confirm({ holdId: held.holdId, buyerEmail: `buyer-${order}@example.test` });
    if (done.status !== 'confirmed') throw new Error(`order ${order}: confirm refused (${done.status})`);
    confirmed.push(held.holdId);
  };
  const loop = (async () => {
    for (let order = 0; !stopping && 2 * order + 1 < ROWS * SEATS_PER_ROW; order += 1) {
      await sellOne(order).catch(() => (failed += 1));
      await sleep(paceMs); // the pace of the load, not a wait for anything
    }
  })();
  return {
    confirmedHoldIds: () => [...confirmed],
    failures: () => failed,
    switchTo: (next) => (service = next),
    untilConfirmed: async (count) => {
      const target = confirmed.length + count;
      while (confirmed.length < target) {
        if (stopping) throw new Error('sales stopped');
        await Promise.race([loop, sleep(50)]);
        if (2 * (confirmed.length + failed) + 1 >= ROWS * SEATS_PER_ROW && confirmed.length < target)
          throw new Error('the show sold out before the orders were confirmed');
      }
    },
    stop: async () => {
      stopping = true;
      await loop;
    },
  };
}
