/**
 * Class data sharing for the stack's JVMs: the classes a JVM loaded, archived when it exits cleanly
 * and mapped at its next start, so a restart (a drill, a crash, `stack start` after `stop`) parses
 * and verifies far fewer classes. Measured on the 2-core machine, idle, three starts each: Connect
 * from launch to its herder ready 3.8–4.5 s without, 2.4–2.5 s with; docs/stack.md has the table.
 *
 * Java 19 and newer keep the archive themselves (AutoCreateSharedArchive: made at exit when it is
 * missing or no longer matches). Java 13–18 (Kafka and Connect run on 17) dump one at exit where
 * none exists and map it otherwise; its file name carries a hash of the Java build and the class
 * path, so an upgrade of either makes a new archive instead of keeping one the JVM would refuse.
 * A JVM killed with -9 writes nothing: the archive of its last clean stop serves its restart.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { StackLayout } from './config.js';
import { javaRuntime } from './java-runtime.js';

/** The JVM options for class data sharing with `archive`; `archived`: the file is there already. */
export function classDataSharingArgs(javaMajor: number, archive: string, archived: boolean): string[] {
  if (javaMajor >= 19) return ['-XX:+AutoCreateSharedArchive', `-XX:SharedArchiveFile=${archive}`];
  if (javaMajor >= 13) return [archived ? `-XX:SharedArchiveFile=${archive}` : `-XX:ArchiveClassesAtExit=${archive}`];
  return [];
}

/** Where the stack keeps the archives (delete it to have them made again at the next clean stops). */
export function jvmArchiveDir(layout: StackLayout): string {
  return join(layout.home, 'jvm-archives');
}

/** The options for the JVM `name` of the stack, run by `java` with `classPath` (a jar or a class path). */
export function stackClassDataSharing(layout: StackLayout, name: string, java: string, classPath: string): string[] {
  const runtime = javaRuntime(java);
  if (runtime === undefined) return [];
  const key = createHash('sha256').update(`${runtime.build}\u0000${classPath}`).digest('hex').slice(0, 16);
  const dir = jvmArchiveDir(layout);
  mkdirSync(dir, { recursive: true });
  const archive = join(dir, `${name}-${key}.jsa`);
  return classDataSharingArgs(runtime.major, archive, existsSync(archive));
}
