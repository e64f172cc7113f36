/**
 * Which outbox events each consumer writes to its inbox. A consumer skips event types it has no
 * rule for (no inbox row), so "published" for a consumer means the outbox rows of its types only.
 */
import { z } from 'zod';
import { EVENTS } from '../../events/catalogue.js';
import { salesLedgerConsumer } from '../../consumers/sales-ledger/consumer.js';
import { seatAvailabilityConsumer } from '../../consumers/seat-availability/consumer.js';
import type { SettingParser } from '../../lib/settings.js';

export const CONSUMER_KINDS = ['seat-availability', 'sales-ledger', 'confirmation-email'] as const;
export type ConsumerKind = (typeof CONSUMER_KINDS)[number];

/** The ce_types each kind of consumer handles, read from the consumer definitions themselves. */
export function eventTypesOf(kind: ConsumerKind): string[] {
  switch (kind) {
    case 'seat-availability':
      return Object.keys(seatAvailabilityConsumer(kind, 'any').eventTypes);
    case 'sales-ledger':
      return Object.keys(salesLedgerConsumer(kind, 'any').eventTypes);
    case 'confirmation-email':
      // Its definition needs an SMTP transport to be built; it handles order.confirmed only.
      return [EVENTS.orderConfirmed.type];
  }
}

/** A consumer as reconciliation sees it: its kind and its name in the inbox (its group id). */
export interface ReconciledConsumer {
  kind: ConsumerKind;
  name: string;
  eventTypes: string[];
}

const ENTRY = /^([a-z-]+)(?:=(.+))?$/;

function parseEntry(entry: string, ctx: z.RefinementCtx): ReconciledConsumer | typeof z.NEVER {
  const match = ENTRY.exec(entry);
  const kind = CONSUMER_KINDS.find((k) => k === match?.[1]);
  if (match === null || kind === undefined) {
    ctx.addIssue({ code: 'custom', message: `unknown consumer "${entry}"` });
    return z.NEVER;
  }
  return { kind, name: match[2] ?? kind, eventTypes: eventTypesOf(kind) };
}

/** "seat-availability,sales-ledger=ledger-blue": kind, optionally =inbox name when the group id differs. */
export function zConsumers(): SettingParser<ReconciledConsumer[]> {
  const schema = z
    .string()
    .transform((text, ctx) =>
      text
        .split(',')
        .map((e) => e.trim())
        .filter((e) => e !== '')
        .map((e) => parseEntry(e, ctx)),
    )
    .pipe(z.array(z.custom<ReconciledConsumer>()).min(1));
  return {
    schema,
    expected: `a comma separated list of ${CONSUMER_KINDS.join(', ')}, each optionally =<inbox consumer name>`,
    example: 'seat-availability,sales-ledger=sales-ledger',
  };
}
