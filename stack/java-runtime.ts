import { spawnSync } from 'node:child_process';

/** A Java command's major version and its full `-version` text (the exact build). */
export interface JavaRuntime {
  major: number;
  build: string;
}

/** Answers of commands that ran (one that did not may be installed later, so it is asked again). */
const known = new Map<string, JavaRuntime>();

/** What `java -version` says of `java`, asked once per command; undefined when it does not run. */
export function javaRuntime(java = 'java'): JavaRuntime | undefined {
  const seen = known.get(java);
  if (seen !== undefined) return seen;
  const result = spawnSync(java, ['-version'], { encoding: 'utf8', timeout: 30_000 });
  const build = result.stderr ?? '';
  const match = /version "(\d+)(?:\.(\d+))?/.exec(build);
  if (result.status !== 0 || !match) return undefined;
  const major = Number(match[1]);
  const runtime = { major: major === 1 ? Number(match[2]) : major, build };
  known.set(java, runtime);
  return runtime;
}
