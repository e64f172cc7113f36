/** One PrometheusRule per Prometheus rule file in monitors/prometheus/, its groups exactly the file's. */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { projectRoot } from '../../stack/config.js';
import { PART_OF } from './cluster.js';

const RULES_DIR = join(projectRoot, 'monitors', 'prometheus');

export function ruleFiles(): string[] {
  return readdirSync(RULES_DIR)
    .filter((file) => file.endsWith('.rules.yml'))
    .sort();
}

export function ruleGroups(file: string): unknown[] {
  const parsed = parse(readFileSync(join(RULES_DIR, file), 'utf8')) as { groups?: unknown[] };
  if (!Array.isArray(parsed.groups)) throw new Error(`monitors/prometheus/${file} has no groups`);
  return parsed.groups;
}

/** consumer-alerts.rules.yml → stagefront-consumer-alerts */
export function ruleResourceName(file: string): string {
  return `stagefront-${file.replace(/\.rules\.yml$/, '')}`;
}

export function prometheusRule(file: string) {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: ruleResourceName(file), labels: { ...PART_OF } },
    spec: { groups: ruleGroups(file) },
  };
}
