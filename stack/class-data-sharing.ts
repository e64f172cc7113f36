/**
 * Class data sharing for the stack's JVMs: the classes a JVM loaded, archived when it exits cleanly
 * and mapped at its next start, so a restart (a drill, a crash, `stack start` after `stop`) parses
 * and verifies far fewer classes. Measured on the 2-core machine, idle, three starts each: Connect
 * from launch to its herder ready 3.8–4.5 s without, 2.4–2.5 s with; docs/stack.md has the table.
 *
 * Java 19 and newer keep the archive themselves (AutoCreateSharedArchive: made at exit when it is
 * missing or no longer matches). Java 13–18 (Kafka and Connect run on 17) dump one at exit where
 * none exists (to a file of its own, made the archive at the next start) and map it otherwise;
 * its file name carries a hash of the Java build and of every jar on the class path (name, size,
 * time), so an upgrade of either makes a new archive, and the old one is deleted, instead of keeping one the JVM would refuse (and with it Java's own base archive).
 * A JVM killed with -9 writes nothing: the archive already there serves its restart.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import type { StackLayout } from './config.js';
import { javaRuntime } from './java-runtime.js';

/** The JVM options for class data sharing with `archive`; `archived`: the file is there already. */
export function classDataSharingArgs(javaMajor: number, archive: string, archived: boolean): string[] {
  if (javaMajor >= 19) return ['-XX:+AutoCreateSharedArchive', `-XX:SharedArchiveFile=${archive}`];
  if (javaMajor >= 13) return [archived ? `-XX:SharedArchiveFile=${archive}` : `-XX:ArchiveClassesAtExit=${archive}`];
  return [];
}

/**
 * The JVM writes an archive's header last, after every region: a file whose first four bytes are
 * not the dynamic archive's magic number (0xf00baba8, little-endian) was cut short, by a JVM killed
 * while it dumped. The JVM would refuse it at every start and, on Java 17, never write it again.
 */
export function isWholeArchive(firstBytes: Buffer): boolean {
  return firstBytes.length >= 4 && firstBytes.readUInt32LE(0) === 0xf00baba8;
}

function firstBytesOf(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const bytes = Buffer.alloc(4);
    return bytes.subarray(0, readSync(fd, bytes, 0, 4, 0));
  } finally {
    closeSync(fd);
  }
}

/**
 * Where the stack keeps the archives: beside the jars they were made from, in the stack's dist
 * folder, so the throwaway stacks of the tests and the bench (a home of their own, the same dist)
 * map the archives too instead of dumping one into a home deleted a moment later. Delete the folder
 * to have them made again at the next clean stops.
 */
export function jvmArchiveDir(layout: StackLayout): string {
  return join(layout.dist, 'jvm-archives');
}

/** A dump that began this long ago and has no header yet was cut short (a dump takes seconds). */
const TORN_PART_AGE_MS = 10 * 60_000;

/**
 * Puts the folder right for the JVM `name` before it starts: its archives of other jars or another
 * Java deleted; a whole dump of this one (`.part`, written at a clean exit) made the archive with an
 * atomic rename, or deleted where the archive is there already (another JVM of the same jars dumped
 * first); a dump without its header deleted once it is old enough to be known torn. A JVM dumps to
 * a file of its own, never to the archive: JVMs of several stacks sharing the folder may stop at
 * the same moment, and a file two JVMs wrote at once would be mapped as garbage.
 */
function tidyArchives(dir: string, name: string, key: string, archive: string): void {
  for (const file of readdirSync(dir)) {
    if (!file.startsWith(`${name}-`)) continue;
    try {
      tidyArchive(dir, file, name, key, archive);
    } catch (err) {
      // Another stack starting the same JVM at the same moment took or deleted this file first.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  try {
    if (existsSync(archive) && !isWholeArchive(firstBytesOf(archive))) rmSync(archive, { force: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** One file of the folder, as tidyArchives says. */
function tidyArchive(dir: string, file: string, name: string, key: string, archive: string): void {
  const match = /^([0-9a-f]{16})\.(jsa|[0-9a-z-]+\.part)$/.exec(file.slice(name.length + 1));
  if (match === null) return;
  const path = join(dir, file);
  if (match[1] !== key) {
    rmSync(path, { force: true }); // an archive of this JVM made from other jars or another Java
    return;
  }
  if (match[2] === 'jsa') return;
  if (isWholeArchive(firstBytesOf(path))) {
    if (existsSync(archive)) rmSync(path, { force: true });
    else renameSync(path, archive);
  } else if (Date.now() - statSync(path).mtimeMs > TORN_PART_AGE_MS) {
    rmSync(path, { force: true });
  }
}

/**
 * What the archive was made from, as the JVM checks it: each jar of `classPath` (a jar, or a class
 * path whose `dir/*` entries stand for every jar in dir) with its size and modification time. The
 * stack's folders carry no version (dist/kafka), so an upgrade shows only in the jars.
 */
function classPathJars(classPath: string): string {
  return classPath
    .split(':')
    .flatMap((entry) =>
      entry.endsWith('/*')
        ? readdirSafe(entry.slice(0, -2))
            .filter((name) => name.endsWith('.jar'))
            .sort()
            .map((name) => join(entry.slice(0, -2), name))
        : [entry],
    )
    .map((jar) => {
      const stat = statSync(jar, { throwIfNoEntry: false });
      return `${jar} ${stat?.size ?? '-'} ${stat?.mtimeMs ?? '-'}`;
    })
    .join('\n');
}

function readdirSafe(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** The options for the JVM `name` of the stack, run by `java` with `classPath` (a jar or a class path). */
export function stackClassDataSharing(layout: StackLayout, name: string, java: string, classPath: string): string[] {
  const runtime = javaRuntime(java);
  if (runtime === undefined) return [];
  const key = createHash('sha256')
    .update(`${runtime.build}\u0000${classPath}\u0000${classPathJars(classPath)}`)
    .digest('hex')
    .slice(0, 16);
  const dir = jvmArchiveDir(layout);
  try {
    mkdirSync(dir, { recursive: true });
  } catch {
    return []; // a dist folder this user may not write (shared, read-only): start without an archive
  }
  const archive = join(dir, `${name}-${key}.jsa`);
  tidyArchives(dir, name, key, archive);
  const archived = existsSync(archive);
  // Java 13–18 dumps where it is told; Java 19 and newer replace the archive themselves.
  const dumpTo = archived || runtime.major >= 19 ? archive : join(dir, `${name}-${key}.${randomUUID()}.part`);
  return classDataSharingArgs(runtime.major, dumpTo, archived);
}
