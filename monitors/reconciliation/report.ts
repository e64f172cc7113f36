/** The reconciliation as people read it: one line per consumer, then the missing ids. */
import type { Reconciliation } from './reconcile.js';

export function describeReconciliation(result: Reconciliation): string {
  const lines = [`outbox rows created from ${result.from.toISOString()} to ${result.to.toISOString()} (exclusive):`];
  for (const c of result.consumers) {
    const oldest = c.oldestMissingAt === undefined ? '' : `, oldest missing created at ${c.oldestMissingAt.toISOString()}`;
    lines.push(`  ${c.consumer.name} (${c.consumer.kind}): published ${c.published}, handled ${c.handled}, missing ${c.missing}${oldest}`);
    if (c.missingIds.length > 0) {
      const more = c.missing > c.missingIds.length ? ` … and ${c.missing - c.missingIds.length} more` : '';
      lines.push(`    missing ce_id: ${c.missingIds.join(', ')}${more}`);
    }
  }
  lines.push(result.gaps ? 'GAPS: some consumers have not handled every published event (see docs/recovery.md).' : 'no gaps: every consumer handled every published event.');
  return `${lines.join('\n')}\n`;
}

/** The same as JSON, for scripts and the recovery log. */
export function reconciliationSummary(result: Reconciliation): Record<string, unknown> {
  return {
    from: result.from.toISOString(),
    to: result.to.toISOString(),
    gaps: result.gaps,
    consumers: result.consumers.map((c) => ({ name: c.consumer.name, kind: c.consumer.kind, published: c.published, handled: c.handled, missing: c.missing })),
  };
}
