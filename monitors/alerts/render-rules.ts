/** The Prometheus rule files, written from the catalogue (byte for byte; test/unit/alerts checks the drift). */
import type { AnyAlertSpec, RuleFileSpec } from './alert-spec.js';
import { runbookUrl } from './alert-spec.js';

/** A YAML single-quoted scalar. */
function quoted(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** The summary Prometheus sends: the catalogue's sentence with the rule's template parameters. */
export function prometheusSummary(spec: AnyAlertSpec): string {
  if (!spec.rule) throw new Error('an alert without a rule has no Prometheus summary');
  return (spec.summary as (params: unknown) => string)(spec.rule.summary);
}

function exprLines(expr: string, indent: string): string[] {
  if (!expr.includes('\n') && !/: | #|^[{[&*!|>'"%@`]/.test(expr)) return [`${indent}expr: ${expr}`];
  return [`${indent}expr: |`, ...expr.split('\n').map((line) => `${indent}  ${line}`)];
}

function ruleLines(name: string, spec: AnyAlertSpec): string[] {
  const rule = spec.rule;
  if (!rule) return [];
  const i = '        ';
  return [
    ...(rule.comment ?? []).map((line) => `      # ${line}`),
    `      - alert: ${name}`,
    ...exprLines(rule.expr, i),
    ...(rule.for ? [`${i}for: ${rule.for}`] : []),
    `${i}labels:`,
    `${i}  severity: ${spec.severity}`,
    `${i}annotations:`,
    `${i}  summary: ${quoted(prometheusSummary(spec))}`,
    `${i}  runbook_url: ${runbookUrl(name)}`,
  ];
}

export function renderRuleFile(spec: RuleFileSpec): string {
  const groups = new Map<string, [string, AnyAlertSpec][]>();
  for (const [name, alert] of Object.entries(spec.alerts)) {
    if (!alert.rule) continue;
    groups.set(alert.rule.group, [...(groups.get(alert.rule.group) ?? []), [name, alert]]);
  }
  const lines = [...spec.header.map((line) => `# ${line}`), 'groups:'];
  for (const [group, alerts] of groups) {
    lines.push(`  - name: ${group}`, '    rules:');
    alerts.forEach(([name, alert], index) => {
      if (index > 0) lines.push('');
      lines.push(...ruleLines(name, alert));
    });
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
