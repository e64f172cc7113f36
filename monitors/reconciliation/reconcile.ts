/**
 * Published vs handled, per consumer: the outbox rows written in a time window (of the types a
 * consumer handles) against the event ids in that consumer's inbox. A row missing from an inbox
 * is a gap: an event the consumer never applied (lost on the way, dead-lettered, or still in
 * flight when the window reaches too close to now).
 *
 * An external effect (the confirmation email) is claimed in the inbox before it is performed and
 * stamped `sent` after, so its inbox row alone does not say the email went out: a claimed row
 * is counted apart from the handled ones, and a claim older than `claimGraceMs` that was never
 * stamped is unsent (the send died, was dead-lettered, or waits for its claim to be abandoned).
 */
import type { Pool } from '../../lib/postgres.js';
import type { ReconciledConsumer } from './consumer-kinds.js';

export interface ReconcileOptions {
  seatPool: Pool;
  consumerPool: Pool;
  consumers: readonly ReconciledConsumer[];
  /** Window of outbox created_at: from inclusive, to exclusive. */
  from: Date;
  to: Date;
  /** Outbox rows read per query (keyset pages on created_at, id). */
  pageSize: number;
  /** Missing ids kept per consumer for the report (all are counted); unsent ids too. */
  missingShown: number;
  /**
   * A claim (inbox status `claimed`, never stamped `sent`) older than this, on the consumer
   * database's clock, counts as unsent; a younger one is a send in flight. DEFAULT_CLAIM_GRACE_MS when omitted.
   */
  claimGraceMs?: number;
}

/** RECONCILE_GRACE_MS's default: a send claimed a minute ago and not stamped has stopped trying (each retry claims again). */
const DEFAULT_CLAIM_GRACE_MS = 60_000;

export interface ConsumerReconciliation {
  consumer: ReconciledConsumer;
  published: number;
  /** In the inbox and done: applied in the effect's transaction, or (external effects) stamped sent. */
  handled: number;
  /** In the inbox as claimed, never stamped sent: the effect may or may not have happened. */
  claimed: number;
  /** Of `claimed`, those claimed longer than the claim grace ago. */
  unsent: number;
  /** The first unsent ids (oldest outbox rows first), at most `missingShown`. */
  unsentIds: string[];
  /** Not in the inbox at all: published = handled + claimed + missing. */
  missing: number;
  /** The oldest missing ids first, at most `missingShown`. */
  missingIds: string[];
  oldestMissingAt: Date | undefined;
}

export interface Reconciliation {
  from: Date;
  to: Date;
  consumers: ConsumerReconciliation[];
  /** Some published event is missing from some consumer's inbox. */
  gaps: boolean;
  /** Some consumer has a claim older than the grace that was never stamped sent. */
  unsent: boolean;
}

/**
 * Nothing left in flight: no published event missing from an inbox, and no email claimed within the
 * claim grace and not yet stamped sent (a send under way; judged now, it would count as missing).
 * A claim past the grace is no longer in flight: it is a finding (unsent), and waiting on does not
 * change it before the consumer gives it up, long after any drain wait.
 */
export function settled(result: Reconciliation): boolean {
  return !result.gaps && result.consumers.every((c) => c.claimed === c.unsent);
}

interface OutboxRow {
  id: string;
  type: string;
  created_ms: number;
  /** created_at as Postgres prints it: exact to the microsecond, for the next page's keyset. */
  created_text: string;
}

async function outboxPage(
  options: ReconcileOptions,
  types: string[],
  after: OutboxRow | undefined,
): Promise<OutboxRow[]> {
  const { rows } = await options.seatPool.query<OutboxRow>(
    /* sql */ `select id::text, type, (extract(epoch from created_at) * 1000)::float8 as created_ms, created_at::text as created_text
                 from outbox
                where created_at >= $1 and created_at < $2 and type = any($3::text[])
                  and ($4::timestamptz is null or (created_at, id) > ($4::timestamptz, $5::uuid))
                order by created_at, id
                limit $6`,
    [options.from, options.to, types, after?.created_text ?? null, after?.id ?? null, options.pageSize],
  );
  return rows;
}

type InboxState = 'handled' | 'claimed' | 'unsent';

/** Each id's inbox row as done, claimed (within the grace) or unsent; ids without a row are absent. */
async function inboxStates(
  consumerPool: Pool,
  consumer: string,
  ids: string[],
  claimGraceMs: number,
): Promise<Map<string, InboxState>> {
  if (ids.length === 0) return new Map();
  const { rows } = await consumerPool.query<{ event_id: string; state: InboxState }>(
    /* sql */ `select event_id,
                      case when status <> 'claimed' then 'handled'
                           when coalesce(claimed_at, received_at) < now() - make_interval(secs => $3::double precision / 1000) then 'unsent'
                           else 'claimed' end as state
                 from inbox where consumer = $1 and event_id = any($2::text[])`,
    [consumer, ids, claimGraceMs],
  );
  return new Map(rows.map((row) => [row.event_id, row.state]));
}

async function tallyPage(options: ReconcileOptions, page: OutboxRow[], tally: ConsumerReconciliation): Promise<void> {
  const mine = page.filter((row) => tally.consumer.eventTypes.includes(row.type));
  const states = await inboxStates(
    options.consumerPool,
    tally.consumer.name,
    mine.map((row) => row.id),
    options.claimGraceMs ?? DEFAULT_CLAIM_GRACE_MS,
  );
  tally.published += mine.length;
  for (const row of mine) {
    const state = states.get(row.id);
    if (state === 'handled') tally.handled += 1;
    if (state === 'claimed' || state === 'unsent') tally.claimed += 1;
    if (state === 'unsent') {
      tally.unsent += 1;
      if (tally.unsentIds.length < options.missingShown) tally.unsentIds.push(row.id);
    }
    if (state !== undefined) continue;
    tally.missing += 1;
    tally.oldestMissingAt ??= new Date(row.created_ms);
    if (tally.missingIds.length < options.missingShown) tally.missingIds.push(row.id);
  }
}

/** Reads the outbox window page by page and checks each page against every consumer's inbox. */
export async function reconcile(options: ReconcileOptions): Promise<Reconciliation> {
  const tallies: ConsumerReconciliation[] = options.consumers.map((consumer) => ({
    consumer,
    published: 0,
    handled: 0,
    claimed: 0,
    unsent: 0,
    unsentIds: [],
    missing: 0,
    missingIds: [],
    oldestMissingAt: undefined,
  }));
  const types = [...new Set(options.consumers.flatMap((c) => c.eventTypes))];
  let after: OutboxRow | undefined;
  for (;;) {
    const page = await outboxPage(options, types, after);
    for (const tally of tallies) await tallyPage(options, page, tally);
    if (page.length < options.pageSize) break;
    after = page.at(-1);
  }
  return {
    from: options.from,
    to: options.to,
    consumers: tallies,
    gaps: tallies.some((t) => t.missing > 0),
    unsent: tallies.some((t) => t.unsent > 0),
  };
}

/** The seat database's clock: outbox created_at comes from it, so windows are measured on it. */
export async function seatDatabaseNow(seatPool: Pool): Promise<Date> {
  const { rows } = await seatPool.query<{ now: Date }>(/* sql */ `select now() as now`);
  const now = rows[0]?.now;
  if (now === undefined) throw new Error('select now() returned no row');
  return now;
}

/** The created_at of the oldest outbox row missing from any inbox, or undefined when there is no gap. */
export function oldestGap(reconciliation: Reconciliation): Date | undefined {
  const times = reconciliation.consumers.flatMap((c) =>
    c.oldestMissingAt === undefined ? [] : [c.oldestMissingAt.getTime()],
  );
  return times.length === 0 ? undefined : new Date(Math.min(...times));
}
