import type { SeatService } from '../seat-service/service.js';
import { seatId } from '../seat-service/inventory.js';

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
  errors: string[];
  holdLatenciesMs: number[];
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
async function buyer(index: number, service: SeatService, showId: string, sections: Section[], options: CrowdOptions, outcome: CrowdOutcome): Promise<void> {
  const random = Math.random;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const began = performance.now();
    const held = await service.hold({ showId, seatIds: wantedSeats(showId, sections, random), buyerId: `buyer-${index}` });
    outcome.holdLatenciesMs.push(performance.now() - began);
    if (held.status === 'seat_taken') {
      outcome.seatTaken += 1;
      continue;
    }
    if (held.status !== 'held') throw new Error(`buyer ${index}: ${held.status}`);
    const plan = behaviour(random, options.abandonPercent, options.releasePercent);
    if (plan === 'abandon') outcome.abandoned += 1;
    else if (plan === 'release') {
      await service.release(held.holdId);
      outcome.released += 1;
    } else {
      const confirmed = await service.confirm({ holdId: held.holdId, buyerEmail: `buyer-${index}@fans.example` });
      if (confirmed.status === 'confirmed') outcome.confirmed += 1;
      else outcome.errors.push(`buyer ${index} confirm: ${confirmed.status}`);
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
}

/** Every buyer presses the button at once; `concurrency` of them are in flight at any moment. */
export async function runCrowd(service: SeatService, showId: string, sections: Section[], options: CrowdOptions): Promise<CrowdOutcome> {
  const outcome: CrowdOutcome = { buyers: options.buyers, confirmed: 0, abandoned: 0, released: 0, gaveUp: 0, seatTaken: 0, errors: [], holdLatenciesMs: [] };
  let next = 0;
  const lane = async () => {
    while (next < options.buyers) {
      const index = next++;
      await buyer(index, service, showId, sections, options, outcome).catch((err: unknown) => {
        outcome.errors.push(`buyer ${index}: ${err instanceof Error ? err.message : String(err)}`);
      });
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  return outcome;
}
