/**
 * `npm run asyncapi`: writes the event contract's AsyncAPI 3.0 document (events/asyncapi.yaml)
 * and its readable page (docs/event-contract.md) from the catalogue. test/events/asyncapi.test.ts
 * fails when either committed file differs from what this writes.
 */
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderAsyncApiYaml } from './asyncapi.js';
import { renderContractPage } from './contract-page.js';
import { buildEventContract } from './contract.js';
import { projectRoot } from '../lib/source-tree.js';

/** The generated files, relative to the project root. */
export const CONTRACT_FILES = { asyncapi: 'events/asyncapi.yaml', page: 'docs/event-contract.md' } as const;

/** What `npm run asyncapi` writes, by path relative to the project root. */
export function renderContractFiles(): Record<string, string> {
  const contract = buildEventContract();
  return {
    [CONTRACT_FILES.asyncapi]: renderAsyncApiYaml(contract),
    [CONTRACT_FILES.page]: renderContractPage(contract),
  };
}

export function contractFilePath(file: string): string {
  return join(projectRoot, file);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [file, text] of Object.entries(renderContractFiles())) {
    writeFileSync(contractFilePath(file), text);
    console.log(`${relative(process.cwd(), contractFilePath(file)) || file}: written`);
  }
}
