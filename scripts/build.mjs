// npm run build: the programs as JavaScript in dist/, so that they start without compiling
// TypeScript at every start (docs/stack.md, "Compiled programs"). npm ci runs it (postinstall);
// the rehearsal, the bench and test:all run it before they start any program.
//
// Plain JavaScript on purpose: the programs image runs it right after npm ci, before the sources
// it compiles are there (it then has nothing to do and says so). esbuild only transpiles, file by
// file, the source tree's shape kept; type-checking stays with `npm run typecheck`.
import { build } from 'esbuild';
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pid, stdout } from 'node:process';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = 'dist';
/** The folders that hold programs and what they import; tests and scripts run as TypeScript. */
const SOURCES = [
  'lib',
  'stack',
  'seat-service',
  'connectors',
  'consumers',
  'monitors',
  'events',
  'rehearsal',
  'bench',
  'examples',
];

function sourceFiles(folder) {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    const typescript = entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts');
    return typescript && !entry.name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

const entryPoints = SOURCES.flatMap((folder) => sourceFiles(join(root, folder)));
if (entryPoints.length === 0) {
  stdout.write('build: no sources here yet, nothing to compile\n');
} else {
  // Written beside, then swapped in: a program reading dist/ never sees half of it.
  const staging = join(root, `${OUT}.building-${pid}`);
  const previous = join(root, `${OUT}.previous-${pid}`);
  try {
    await build({
      absWorkingDir: root,
      entryPoints,
      outdir: staging,
      outbase: '.',
      format: 'esm',
      platform: 'node',
      target: 'node20',
      sourcemap: true,
      logLevel: 'warning',
    });
    if (existsSync(join(root, OUT))) renameSync(join(root, OUT), previous);
    renameSync(staging, join(root, OUT));
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(previous, { recursive: true, force: true });
  }
}
