/**
 * The decision table in docs/consumers.md comes from the runtime's own rules
 * (consumers/runtime/decision.ts), so it cannot drift: `npm run docs:decisions` rewrites the
 * `<!-- decisions -->` … `<!-- /decisions -->` block, and a unit test fails when the file differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DECISION_RULES, type DecisionRule } from '../consumers/runtime/decision.js';
import { projectRoot } from '../stack/config.js';

export const DECISIONS_DOC = join(projectRoot, 'docs', 'consumers.md');

const UNIT_NAMES: Record<DecisionRule['unit'], string> = {
  any: 'any',
  group: 'a group',
  record: 'a record alone',
  'dead-letter': 'a dead letter',
};

function outcomeText(outcome: DecisionRule['outcome']): string {
  const names = typeof outcome === 'string' ? [outcome] : outcome;
  return names.map((name) => `\`${name}\``).join(' or ');
}

export function decisionTable(rules: readonly DecisionRule[] = DECISION_RULES): string {
  const lines = ['| # | unit | outcome | when | decision | then |', '| --- | --- | --- | --- | --- | --- |'];
  rules.forEach((rule, index) =>
    lines.push(
      `| ${index + 1} | ${UNIT_NAMES[rule.unit]} | ${outcomeText(rule.outcome)} | ${rule.when || 'always'} | **${rule.decision}** | ${rule.then} |`,
    ),
  );
  return lines.join('\n');
}

/** The document with its decisions block rewritten; a document without one is an error. */
export function renderDecisionBlock(markdown: string): string {
  const block = /<!-- decisions -->\n[\s\S]*?<!-- \/decisions -->\n/;
  if (!block.test(markdown))
    throw new Error(`${relative(projectRoot, DECISIONS_DOC)} has no <!-- decisions --> … <!-- /decisions --> block`);
  return markdown.replace(block, () => `<!-- decisions -->\n${decisionTable()}\n<!-- /decisions -->\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(DECISIONS_DOC, renderDecisionBlock(readFileSync(DECISIONS_DOC, 'utf8')));
  console.log(`${relative(projectRoot, DECISIONS_DOC)}: decision table rewritten`);
}
