/**
 * The alert sections of docs/operations.md, written from the catalogue between markers (the
 * headings, what each alert means, its steps): an alert's runbook steps live only in its catalogue.
 */
import type { AnyAlertSpec } from './alert-spec.js';
import type { RunbookSection } from './catalog.js';

export function beginMarker(marker: string): string {
  return `<!-- generated: ${marker} (npm run -s alerts:render from monitors/alerts/) -->`;
}

function endMarker(marker: string): string {
  return `<!-- end generated: ${marker} -->`;
}

/** '2m' → '2 min', '30s' → '30 s', '1h' → '1 h'. */
function duration(value: string): string {
  const match = /^(\d+)(s|m|h)$/.exec(value);
  if (!match) throw new Error(`unsupported duration ${value}`);
  return `${match[1]} ${{ s: 's', m: 'min', h: 'h' }[match[2] as 's' | 'm' | 'h']}`;
}

/** "*critical, after 2 min; Prometheus only.*": the severity and when it fires, from the rule. */
function qualifier(spec: AnyAlertSpec, monitorsRaiseThisKind: boolean): string {
  const wait = spec.rule?.for ? duration(spec.rule.for) : undefined;
  if (!spec.rule) return `${spec.severity}; the ${(spec.raisedBy ?? 'monitor').replace('-', ' ')} only`;
  if (spec.raisedBy) return wait ? `${spec.severity} (after ${wait} in the Prometheus rule)` : spec.severity;
  return `${spec.severity}${wait ? `, after ${wait}` : ''}${monitorsRaiseThisKind ? '; Prometheus only' : ''}`;
}

function alertSection(name: string, spec: AnyAlertSpec, monitorsRaiseThisKind: boolean): string[] {
  return [
    `### ${name}`,
    `*${qualifier(spec, monitorsRaiseThisKind)}.* ${spec.meaning}`,
    ...spec.steps.map((step, index) => `${index + 1}. ${step}`),
    ...(spec.after ? ['', spec.after] : []),
  ];
}

function renderSection(section: RunbookSection): string {
  const specs = Object.entries(section.alerts);
  const monitorsRaiseThisKind = specs.some(([, spec]) => spec.raisedBy !== undefined);
  const body = specs.map(([name, spec]) => alertSection(name, spec, monitorsRaiseThisKind).join('\n'));
  return [beginMarker(section.marker), '', body.join('\n\n'), '', endMarker(section.marker)].join('\n');
}

/** `document` with every generated section replaced; throws when a section's markers are missing. */
export function renderRunbooks(document: string, sections: readonly RunbookSection[]): string {
  let text = document;
  for (const section of sections) {
    const begin = text.indexOf(beginMarker(section.marker));
    const end = text.indexOf(endMarker(section.marker));
    if (begin < 0 || end < begin)
      throw new Error(`docs/operations.md lacks the markers of ${section.marker}: ${beginMarker(section.marker)}`);
    text = `${text.slice(0, begin)}${renderSection(section)}${text.slice(end + endMarker(section.marker).length)}`;
  }
  return text;
}
