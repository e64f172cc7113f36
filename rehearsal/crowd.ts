import { errorMessage } from '../lib/errors.js';
import { retryDelay, sleep } from '../lib/wait.js';
import type { SeatService } from '../seat-service/service.js';
import { seatId } from '../seat-service/inventory.js';
import type { CrowdSchedule } from './schedule.js';

export interface Section {
  section: string;
  rows: number;
  seatsPerRow: number;
}

export interface CrowdOutcome {
  buyers: number;
  confirmed: number;
  abandoned: number;
  released: number;
  gaveUp: number;
  seatTaken: number;
  /** Every failed call and every unexpected answer, when it happened (drills are told apart by time). */
  errors: { at: number; message: string }[];
  /** Buyers whose call still failed after retrying for BUYER_PATIENCE_MS. */
  failedBuyers: number;
  holdLatenciesMs: number[];
}

/**
 * A real client retries a call that failed (the seat database restarting, a dropped connection)
 * with backoff, for about a minute, before it tells the buyer to try later.
 */
const BUYER_PATIENCE_MS = 60_000;

async function patiently<T>(what: string, call: () => Promise<T>, outcome: CrowdOutcome): Promise<T> {
  const deadline = Date.now() + BUYER_PATIENCE_MS;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await call();
    } catch (err) {
      outcome.errors.push({ at: Date.now(), message: `${what}: ${errorMessage(err)}` });
      if (Date.now() >= deadline) throw err;
      await sleep(retryDelay({ attempt, baseMs: 100, capMs: 2000 }));
    }
  }
}

type Behaviour = 'confirm' | 'abandon' | 'release';

/** A buyer wants 1–4 adjacent seats, mostly in the first (best) section. */
function wantedSeats(showId: string, sections: Section[], random: () => number): string[] {
  const section = (random() < 0.6 ? sections[0] : sections[Math.floor(random() * sections.length)]) ?? sections[0];
  if (!section) throw new Error('a show needs at least one section');
  const count = 1 + Math.floor(random() * Math.min(4, section.seatsPerRow));
  const row = 1 + Math.floor(random() * section.rows);
  const first = 1 + Math.floor(random() * (section.seatsPerRow - count + 1));
  return Array.from({ length: count }, (_, i) => seatId(showId, section.section, row, first + i));
}

function behaviour(random: () => number, abandonPercent: number, releasePercent: number): Behaviour {
  const roll = random() * 100;
  if (roll < abandonPercent) return 'abandon';
  if (roll < abandonPercent + releasePercent) return 'release';
  return 'confirm';
}

/** One buyer: up to three tries for seats; then confirms, walks away or gives the seats back. */
async function buyer(
  index: number,
  service: SeatService,
  showId: string,
  sections: Section[],
  options: CrowdOptions,
  outcome: CrowdOutcome,
): Promise<void> {
  const random = Math.random;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const began = performance.now();
    const seatIds = wantedSeats(showId, sections, random);
    const held = await patiently(
      `buyer ${index} hold`,
      () => service.hold({ showId, seatIds, buyerId: `buyer-${index}` }),
      outcome,
    );
    outcome.holdLatenciesMs.push(performance.now() - began);
    if (held.status === 'seat_taken') {
      outcome.seatTaken += 1;
      continue;
    }
    if (held.status !== 'held') throw new Error(`buyer ${index}: ${held.status}`);
    const plan = behaviour(random, options.abandonPercent, options.releasePercent);
    if (plan === 'abandon') outcome.abandoned += 1;
    else if (plan === 'release') {
      const released = await patiently(`buyer ${index} release`, () => service.release(held.holdId), outcome);
      // A retried call whose first try had committed finds the hold released already.
      if (
        released.status === 'released' ||
        (released.status === 'hold_not_active' && released.holdStatus === 'released')
      )
        outcome.released += 1;
      else outcome.errors.push({ at: Date.now(), message: `buyer ${index} release: ${released.status}` });
    } else {
      const confirmed = await patiently(
        `buyer ${index} confirm`,
        () => service.confirm({ holdId: held.holdId, buyerEmail: `buyer-${index}@fans.example` }),
        outcome,
      );
      if (
        confirmed.status === 'confirmed' ||
        (confirmed.status === 'hold_not_active' && confirmed.holdStatus === 'confirmed')
      )
        outcome.confirmed += 1;
      else outcome.errors.push({ at: Date.now(), message: `buyer ${index} confirm: ${confirmed.status}` });
    }
    return;
  }
  outcome.gaveUp += 1;
}

export interface CrowdOptions {
  buyers: number;
  concurrency: number;
  abandonPercent: number;
  releasePercent: number;
  /** When each buyer arrives: all at once without drills, in phases around the drills with them. */
  schedule: CrowdSchedule;
}

/** The buyers arrive as the schedule says; `concurrency` of them are in flight at any moment. */
export async function runCrowd(
  service: SeatService,
  showId: string,
  sections: Section[],
  options: CrowdOptions,
): Promise<CrowdOutcome> {
  const outcome: CrowdOutcome = {
    buyers: options.buyers,
    confirmed: 0,
    abandoned: 0,
    released: 0,
    gaveUp: 0,
    seatTaken: 0,
    errors: [],
    failedBuyers: 0,
    holdLatenciesMs: [],
  };
  let next = 0;
  const lane = async () => {
    while (next < options.buyers) {
      const index = next++;
      const arrival = await options.schedule.arrival(index);
      if (arrival > Date.now()) await sleep(arrival - Date.now());
      await buyer(index, service, showId, sections, options, outcome).catch((err: unknown) => {
        outcome.failedBuyers += 1;
        outcome.errors.push({ at: Date.now(), message: `buyer ${index} gave up: ${errorMessage(err)}` });
      });
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  return outcome;
}
