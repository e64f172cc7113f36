import type { Pool } from '../lib/postgres.js';
import { withTransaction } from '../lib/postgres.js';

export interface SectionPlan {
  section: string;
  rows: number;
  seatsPerRow: number;
  priceCents: number;
}

export interface ShowPlan {
  showId: string;
  title: string;
  startsAt: Date;
  onSaleAt: Date;
  sections: SectionPlan[];
}

/** Seat ids read like a ticket: `<show>:<section>-<row>-<seat>`. */
export function seatId(showId: string, section: string, row: number, seat: number): string {
  return `${showId}:${section}-${row}-${seat}`;
}

/** Creates a show and all its seats, available (idempotent for an existing show id). */
export async function createShow(pool: Pool, plan: ShowPlan): Promise<number> {
  return withTransaction(pool, async (client) => {
    await client.query(
      /* sql */ `insert into shows (show_id, title, starts_at, on_sale_at) values ($1, $2, $3, $4) on conflict do nothing`,
      [plan.showId, plan.title, plan.startsAt, plan.onSaleAt],
    );
    let created = 0;
    for (const section of plan.sections) {
      const { rowCount } = await client.query(
        /* sql */ `insert into seats (seat_id, show_id, section, row_label, seat_number, price_cents)
          select $1 || ':' || $2 || '-' || r || '-' || n, $1, $2, r::text, n, $5
            from generate_series(1, $3::int) r, generate_series(1, $4::int) n
          on conflict do nothing`,
        [plan.showId, section.section, section.rows, section.seatsPerRow, section.priceCents],
      );
      created += rowCount ?? 0;
    }
    return created;
  });
}
