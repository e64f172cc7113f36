/** The reconciliation as people read it: one line per consumer, then the missing and unsent ids. */
import type { ConsumerReconciliation, Reconciliation } from './reconcile.js';

/** Claims are counted for consumers with external effects (the email), and for any other that has one. */
function claimsPart(c: ConsumerReconciliation): string {
  if (c.consumer.kind !== 'confirmation-email' && c.claimed === 0) return '';
  return `, claimed not sent ${c.claimed}${c.unsent > 0 ? ` (${c.unsent} past the claim grace: unsent)` : ''}`;
}

export function describeReconciliation(result: Reconciliation): string {
  const lines = [`outbox rows created from ${result.from.toISOString()} to ${result.to.toISOString()} (exclusive):`];
  for (const c of result.consumers) {
    const oldest =
      c.oldestMissingAt === undefined ? '' : `, oldest missing created at ${c.oldestMissingAt.toISOString()}`;
    lines.push(
      `  ${c.consumer.name} (${c.consumer.kind}): published ${c.published}, handled ${c.handled}, missing ${c.missing}${oldest}${claimsPart(c)}`,
    );
    if (c.missingIds.length > 0) {
      const more = c.missing > c.missingIds.length ? ` … and ${c.missing - c.missingIds.length} more` : '';
      lines.push(`    missing ce_id: ${c.missingIds.join(', ')}${more}`);
    }
    if (c.unsentIds.length > 0) {
      const more = c.unsent > c.unsentIds.length ? ` … and ${c.unsent - c.unsentIds.length} more` : '';
      lines.push(`    unsent ce_id: ${c.unsentIds.join(', ')}${more}`);
    }
  }
  if (result.gaps) lines.push('GAPS: some consumers have not handled every published event (see docs/recovery.md).');
  if (result.unsent)
    lines.push(
      'UNSENT: some effects were claimed longer ago than the claim grace and never stamped sent (see docs/recovery.md).',
    );
  if (!result.gaps && !result.unsent) {
    const inFlight = result.consumers.reduce((n, c) => n + c.claimed, 0);
    lines.push(
      inFlight === 0
        ? 'no gaps: every consumer handled every published event.'
        : `no gaps: every published event reached every consumer; ${inFlight} claimed within the claim grace, not stamped sent yet.`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The same as JSON, for scripts and the recovery log. */
export function reconciliationSummary(result: Reconciliation): Record<string, unknown> {
  return {
    from: result.from.toISOString(),
    to: result.to.toISOString(),
    gaps: result.gaps,
    unsent: result.unsent,
    consumers: result.consumers.map((c) => ({
      name: c.consumer.name,
      kind: c.consumer.kind,
      published: c.published,
      handled: c.handled,
      claimed: c.claimed,
      unsent: c.unsent,
      missing: c.missing,
    })),
  };
}
