import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

function nearestPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}: the project's files are incomplete`);
  }
}

/** The project's root: the nearest folder above this module holding package.json, from the sources and from dist/ alike. */
export const projectRoot = nearestPackageRoot(dirname(fileURLToPath(import.meta.url)));

/** Where `npm run build` writes the programs as JavaScript: the source tree's shape, `.ts` → `.js`. */
const COMPILED_DIR = join(projectRoot, 'dist');

/**
 * A file kept beside a module in the sources (migrations, schemas, a connector's JSON): found from
 * the module's own URL whether it runs as TypeScript or compiled into dist/, which holds no such files.
 */
export function besideModule(moduleUrl: string, ...parts: string[]): string {
  const folder = dirname(fileURLToPath(moduleUrl));
  const inCompiled = relative(COMPILED_DIR, folder);
  const compiled = inCompiled === '' || !(inCompiled.startsWith('..') || inCompiled.startsWith(sep));
  return compiled ? join(projectRoot, inCompiled, ...parts) : join(folder, ...parts);
}

/** The compiled program of a source entry such as `consumers/seat-availability/main.ts`. */
export function compiledEntry(entry: string): string {
  if (!entry.endsWith('.ts')) throw new Error(`${entry} is not a TypeScript entry`);
  return join(COMPILED_DIR, `${entry.slice(0, -'.ts'.length)}.js`);
}

/** The npm scripts that run a compiled program (`node … dist/<path>.js`), each with its source entry. */
export function compiledScripts(): { script: string; source: string }[] {
  const { scripts } = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  return Object.entries(scripts).flatMap(([script, line]) =>
    [...line.matchAll(/\bdist\/(\S+)\.js\b/g)].map((match) => ({ script, source: `${match[1]}.ts` })),
  );
}

/**
 * `npm run build`, from a program that is about to start compiled ones (the rehearsal, the bench,
 * the suite): what they start is then the sources as they are now, never an older build.
 */
export function buildPrograms(): void {
  const result = spawnSync(process.execPath, [join(projectRoot, 'scripts', 'build.mjs')], {
    cwd: projectRoot,
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    throw new Error(
      `npm run build failed (${result.error?.message ?? `exit ${result.status}`}); fix what it says and run it again:\n${result.stderr}`,
    );
  }
}
