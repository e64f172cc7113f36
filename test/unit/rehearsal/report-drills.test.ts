/** The text report's drill lines: each drill's time to fresh, in words, from the record. */
import { describe, expect, it } from 'vitest';
import { renderTextReport } from '../../../rehearsal/report.js';
import { fixtureRecord, QUIET_EXTRAS as extras } from '../../rehearsal/fixtures/report-fixture.js';

const fixture = fixtureRecord();

const drillLine = (text: string, target: string) =>
  text.split('\n').find((line) => line.startsWith(`    ${target.padEnd(9)} killed`)) ?? '';

describe("the text report's drills", () => {
  it('gives the time from the kill until fresh again, or says there was no event to judge by', () => {
    const text = renderTextReport(fixture, extras);
    // The fixture's connect drill was fresh 24.3 s after its kill; its consumer drill had no event.
    expect(drillLine(text, 'connect')).toContain(', fresh again +24.3 s; peak lag');
    expect(drillLine(text, 'consumer')).toContain(', fresh: no seat availability event to judge by; peak lag');
  });

  it('gives the budget next to the time to fresh when the record keeps it', () => {
    const budgeted = { ...fixture, drills: fixture.drills.map((drill) => ({ ...drill, freshBudgetMs: 35_000 })) };
    expect(drillLine(renderTextReport(budgeted, extras), 'connect')).toContain(
      ', fresh again +24.3 s (budget 35.0 s); peak lag',
    );
  });

  it('says nothing of freshness for a record written before it was kept', () => {
    const older = { ...fixture, drills: fixture.drills.map(({ freshAt: _, ...drill }) => drill) };
    expect(renderTextReport(older, extras)).not.toContain('fresh');
  });
});
