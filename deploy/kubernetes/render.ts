/**
 * `npm run k8s:render` writes deploy/kubernetes/manifests/ from the project's own sources (the
 * connector file, the settings tables, the rule files, stack/versions.json) and removes manifest
 * files it no longer renders. `-- --check` writes nothing and exits 1 naming the files that differ.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MANIFESTS_DIR, RENDER_COMMAND, manifestDrift, renderManifests } from './manifests.js';

function main(args: string[]): number {
  const rendered = renderManifests();
  if (args.includes('--check')) {
    const drift = manifestDrift(rendered);
    if (drift.length === 0) return 0;
    console.error(
      `deploy/kubernetes/manifests/ differs from its sources (${drift.join(', ')}): run ${RENDER_COMMAND} and commit the result.`,
    );
    return 1;
  }
  mkdirSync(MANIFESTS_DIR, { recursive: true });
  for (const file of readdirSync(MANIFESTS_DIR))
    if (file.endsWith('.yaml') && !rendered.has(file)) rmSync(join(MANIFESTS_DIR, file));
  for (const [file, text] of rendered) writeFileSync(join(MANIFESTS_DIR, file), text);
  console.log(`wrote ${rendered.size} files to deploy/kubernetes/manifests/`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
