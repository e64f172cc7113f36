/**
 * What one alert is, in one place: name, severity, the summary sentence, the Prometheus rule (expr,
 * `for`, its group), the runbook (what it means, the steps, what happens after) and its runbook_url.
 * The catalogues (slot-alerts.ts, job-alerts.ts, consumer-alerts.ts) are the only source: they
 * generate monitors/prometheus/*.rules.yml and the alert sections of docs/operations.md
 * (render-rules.ts, render-runbooks.ts; `npm run -s alerts:render`), and the monitors' in-process
 * alerts read their severity, summary and runbook from them.
 */
export type Severity = 'critical' | 'warning' | 'info' | 'none';

/** The document with a runbook section per alert, relative to the project root. */
export const RUNBOOK_DOCUMENT = 'docs/operations.md';

/** An alert's runbook section: the heading named after the alert (its anchor is the name in lower case). */
export function runbookUrl(name: string): string {
  return `${RUNBOOK_DOCUMENT}#${name.toLowerCase()}`;
}

/**
 * A time threshold in an expr compared with the age of a sample read by the rule (time() minus a
 * timestamp the program exported): such an age includes the scrape and evaluation delays.
 */
interface StalenessThreshold {
  /** The smallest value the threshold can take, in seconds. */
  minSeconds: number;
  /** What the threshold is, for the interval test's message. */
  what: string;
}

interface RuleSpec<P> {
  /** The rule group in the rule file. */
  group: string;
  /** Comment lines written above the rule. */
  comment?: readonly string[];
  expr: string;
  /** Prometheus duration, e.g. '2m'; absent: fires at the first evaluation that matches. */
  for?: string;
  /** The summary's parameters as Prometheus templates, e.g. { slot: '{{ $labels.slot_name }}' }. */
  summary: P;
  /** Every threshold compared with a sample's age (an expr that uses time() must list them). */
  staleness?: readonly StalenessThreshold[];
}

/** Who raises an alert besides (or instead of) Prometheus. */
export type InProcessSource = 'slot-monitor' | 'job-watchdog';

export interface AlertSpec<P = Record<string, never>> {
  severity: Severity;
  /** The one sentence on-call reads first; Prometheus and the monitors bind the same parameters. */
  summary: (params: P) => string;
  /** Absent: only the monitor raises it (it alone knows the condition). */
  rule?: RuleSpec<P>;
  /** The monitor that raises it in process; absent: Prometheus only. */
  raisedBy?: InProcessSource;
  /** Markdown: what the alert means (the paragraph under its heading in docs/operations.md). */
  meaning: string;
  /** Markdown: what to do, in order. The monitors send them as the `runbook` annotation. */
  steps: readonly string[];
  /** Markdown written after the steps (how it resolves). */
  after?: string;
}

/** Defines one alert, keeping its summary's parameter type. */
export function alert<P>(spec: AlertSpec<P>): AlertSpec<P> {
  return spec;
}

/** Any alert of the catalogue, whatever its summary's parameters. */
export type AnyAlertSpec = Omit<AlertSpec<never>, 'rule'> & {
  rule?: Omit<RuleSpec<never>, 'summary'> & { summary: unknown };
};

/** One rule file: its header comment and its alerts in order. */
export interface RuleFileSpec {
  /** File name in monitors/prometheus/. */
  file: string;
  header: readonly string[];
  alerts: Readonly<Record<string, AnyAlertSpec>>;
}

/**
 * Markdown as plain text, for an annotation: links become their text (with the document they open,
 * for a link to another page), emphasis marks go; code spans stay.
 */
function plainText(markdown: string): string {
  return markdown
    .replace(/\[([^\]]+)\]\(#[^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\(([^)#]+\.md)(#[^)]*)?\)/g, (_m, text: string, file: string, anchor?: string) => {
      return `${text} (docs/${file}${anchor ?? ''})`;
    })
    .replace(/\*\*([^*]+)\*\*/g, '$1');
}

/** The runbook as numbered plain lines, the way the `runbook` annotation carries it. */
export function runbookText(spec: Pick<AnyAlertSpec, 'steps'>): string {
  return spec.steps.map((step, index) => `${index + 1}. ${plainText(step)}`).join('\n');
}
