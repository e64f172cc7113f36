import type { SectionPlan } from './inventory.js';

/** `A:20x30:4500,B:10x10:9900` → sections with rows, seats per row and price. */
export function parseSections(text: string): SectionPlan[] {
  return text.split(',').map((part) => {
    const match = /^([A-Za-z0-9]+):(\d+)x(\d+):(\d+)$/.exec(part.trim());
    if (!match)
      throw new Error(`section "${part}" is not like A:20x30:4500 (name:rows x seats per row:price in cents)`);
    return {
      section: match[1] ?? '',
      rows: Number(match[2]),
      seatsPerRow: Number(match[3]),
      priceCents: Number(match[4]),
    };
  });
}
