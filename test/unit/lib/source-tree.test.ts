import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { besideModule, compiledEntry, compiledScripts, projectRoot } from '../../../lib/source-tree.js';

describe('the compiled programs (dist/)', () => {
  it('finds a file beside its module from the sources and from the compiled program alike', () => {
    const fromSource = pathToFileURL(join(projectRoot, 'consumers', 'runtime', 'migrations.ts')).href;
    const fromDist = pathToFileURL(join(projectRoot, 'dist', 'consumers', 'runtime', 'migrations.js')).href;
    const expected = join(projectRoot, 'consumers', 'migrations');
    expect(besideModule(fromSource, '..', 'migrations')).toBe(expected);
    expect(besideModule(fromDist, '..', 'migrations')).toBe(expected);
    expect(existsSync(expected)).toBe(true);
  });

  it('maps a source entry to its compiled program, and refuses what is not TypeScript', () => {
    expect(compiledEntry('consumers/sales-ledger/main.ts')).toBe(
      join(projectRoot, 'dist', 'consumers', 'sales-ledger', 'main.js'),
    );
    expect(() => compiledEntry('consumers/sales-ledger/main.js')).toThrow('is not a TypeScript entry');
  });

  it('every npm script that runs a compiled program names a source that exists and was built (the suite builds first)', () => {
    const compiled = compiledScripts();
    expect(compiled.map((c) => c.script)).toEqual(
      expect.arrayContaining(['consumer:seat-availability', 'hold-sweeper', 'slot-monitor', 'job-watchdog']),
    );
    for (const { script: name, source } of compiled) {
      expect(existsSync(join(projectRoot, source)), `${name}: ${source}`).toBe(true);
      expect(existsSync(compiledEntry(source)), `${name}: ${source} compiled`).toBe(true);
    }
  });
});
