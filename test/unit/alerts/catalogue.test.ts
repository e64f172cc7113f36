/**
 * The alert catalogue (monitors/alerts/) is the one source of every alert: the committed rule files
 * and the alert sections of docs/operations.md are what it renders, byte for byte, and each monitor
 * raises in process exactly its part of it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUNBOOK_DOCUMENT, runbookText } from '../../../monitors/alerts/alert-spec.js';
import { ALL_ALERTS, RULE_FILES, RUNBOOK_SECTIONS, raisedBy } from '../../../monitors/alerts/catalog.js';
import { prometheusSummary, renderRuleFile } from '../../../monitors/alerts/render-rules.js';
import { beginMarker, renderRunbooks } from '../../../monitors/alerts/render-runbooks.js';
import { JOB_ALERTS } from '../../../monitors/job-watchdog/alert-catalog.js';
import { ALERTS } from '../../../monitors/slot-monitor/alert-catalog.js';
import { projectRoot } from '../../../stack/config.js';

const FIX = 'run npm run -s alerts:render and commit the result';

describe('the alert catalogue generates', () => {
  it.each(RULE_FILES.map((spec) => [spec.file, spec] as const))('monitors/prometheus/%s', (file, spec) => {
    const committed = readFileSync(join(projectRoot, 'monitors', 'prometheus', file), 'utf8');
    expect(committed, `${file} differs from the catalogue: ${FIX}`).toBe(renderRuleFile(spec));
  });

  it('the alert sections of docs/operations.md', () => {
    const committed = readFileSync(join(projectRoot, RUNBOOK_DOCUMENT), 'utf8');
    expect(committed, `docs/operations.md differs from the catalogue: ${FIX}`).toBe(
      renderRunbooks(committed, RUNBOOK_SECTIONS),
    );
    for (const section of RUNBOOK_SECTIONS) expect(committed).toContain(beginMarker(section.marker));
  });

  it('one heading per alert in docs/operations.md, and only the generated one', () => {
    const committed = readFileSync(join(projectRoot, RUNBOOK_DOCUMENT), 'utf8');
    for (const name of Object.keys(ALL_ALERTS)) {
      expect(
        committed.split('\n').filter((line) => line === `### ${name}`),
        name,
      ).toHaveLength(1);
    }
  });
});

describe('the catalogue itself', () => {
  it('defines each alert name once', () => {
    const names = RUNBOOK_SECTIONS.flatMap((section) => Object.keys(section.alerts));
    expect(names.length).toBeGreaterThan(30);
    expect(new Set(names).size).toBe(names.length);
    const ruleNames = RULE_FILES.flatMap((file) => Object.keys(file.alerts));
    expect(new Set(ruleNames).size).toBe(ruleNames.length);
  });

  it('every alert has a summary, a meaning and runbook steps; Prometheus fills every parameter', () => {
    for (const [name, spec] of Object.entries(ALL_ALERTS)) {
      expect(spec.steps.length, name).toBeGreaterThan(0);
      expect(spec.meaning.length, name).toBeGreaterThan(20);
      if (spec.rule) expect(prometheusSummary(spec), name).not.toMatch(/undefined|\[object|=>/);
      expect(spec.rule !== undefined || spec.raisedBy !== undefined, `${name} is raised by nobody`).toBe(true);
    }
  });

  it('each monitor raises in process exactly the alerts the catalogue says it does', () => {
    expect(Object.keys(ALERTS).sort()).toEqual(raisedBy('slot-monitor').sort());
    expect(Object.keys(JOB_ALERTS).sort()).toEqual(raisedBy('job-watchdog').sort());
  });

  it("the monitors' runbook annotation is the catalogue's steps as plain numbered lines", () => {
    expect(runbookText(ALERTS.SlotWalUnreserved)).toBe(
      [
        '1. If the disk has room, raise the cap: the slot goes back to `extended` and the monitor holds the raise until the slot has caught up. Do not raise it without the room: a full disk stops every sale, which is worse than re-emitting events.',
        '2. Find the connector and get it reading again (as for SlotWalExtended). If it catches up before the checkpoint, the alert resolves.',
        '3. If the slot becomes lost, follow SlotLost.',
      ].join('\n'),
    );
    expect(runbookText(ALERTS.SlotLost)).toContain('(Lost-slot recovery (docs/recovery.md))');
  });
});
