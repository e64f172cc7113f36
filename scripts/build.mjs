// npm run build: the programs as JavaScript in dist/, so that they start without compiling
// TypeScript at every start (docs/stack.md, "How fast a crashed component is back"). npm ci runs
// it (postinstall); the rehearsal, the bench and the test suite run it before they start a program.
//
// Plain JavaScript on purpose: the programs image runs it right after npm ci, before the sources
// it compiles are there (it then has nothing to do and says so). esbuild only transpiles, file by
// file, the source tree's shape kept; type-checking stays with `npm run typecheck`.
//
// A build whose sources have not changed since the last one writes nothing (dist/.sources holds
// their fingerprint): two test runs building at once, or a build while programs run from dist/,
// never see each other's half-written files. A real build is written beside, then swapped in.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pid, stdout } from 'node:process';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);
const root = join(dirname(here), '..');
const OUT = join(root, 'dist');
const FINGERPRINT = join(OUT, '.sources');
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

/** Every source's path, size and modification time, and this script's: what a build's output depends on. */
function fingerprintOf(files) {
  const hash = createHash('sha256');
  for (const file of [...files, relative(root, here)].sort()) {
    const stat = statSync(join(root, file));
    hash.update(`${file}\0${stat.size}\0${stat.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

const entryPoints = SOURCES.flatMap((folder) => sourceFiles(join(root, folder)));
const fingerprint = fingerprintOf(entryPoints);
const built = existsSync(FINGERPRINT) ? readFileSync(FINGERPRINT, 'utf8') : '';
if (entryPoints.length === 0) {
  stdout.write('build: no sources here yet, nothing to compile\n');
} else if (built !== fingerprint) {
  // Beside dist/, on its file system (a rename), under names that git, the linters and the image
  // ignore as they ignore dist/ itself.
  const staging = `${OUT}.building-${pid}`;
  const previous = `${OUT}.previous-${pid}`;
  try {
    // Loaded only for a real build: an up-to-date check (every npm run stack) stays quick.
    const { build } = await import('esbuild');
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
    writeFileSync(join(staging, '.sources'), fingerprint);
    if (existsSync(OUT)) renameSync(OUT, previous);
    renameSync(staging, OUT);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(previous, { recursive: true, force: true });
  }
}
