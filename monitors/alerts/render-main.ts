/** npm run -s alerts:render: writes the rule files and the alert sections of docs/operations.md from the catalogue. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../stack/config.js';
import { RUNBOOK_DOCUMENT } from './alert-spec.js';
import { RULE_FILES, RUNBOOK_SECTIONS } from './catalog.js';
import { renderRuleFile } from './render-rules.js';
import { renderRunbooks } from './render-runbooks.js';

for (const spec of RULE_FILES) {
  writeFileSync(join(projectRoot, 'monitors', 'prometheus', spec.file), renderRuleFile(spec));
  console.log(`wrote monitors/prometheus/${spec.file}`);
}
const docs = join(projectRoot, RUNBOOK_DOCUMENT);
writeFileSync(docs, renderRunbooks(readFileSync(docs, 'utf8'), RUNBOOK_SECTIONS));
console.log(`wrote ${RUNBOOK_DOCUMENT}`);
