import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  classDataSharingArgs,
  isWholeArchive,
  jvmArchiveDir,
  stackClassDataSharing,
} from '../../../stack/class-data-sharing.js';
import { stackLayout } from '../../../stack/config.js';

describe('class data sharing options', () => {
  it.each([
    { java: 25, archived: false, args: ['-XX:+AutoCreateSharedArchive', '-XX:SharedArchiveFile=a.jsa'] },
    { java: 21, archived: true, args: ['-XX:+AutoCreateSharedArchive', '-XX:SharedArchiveFile=a.jsa'] },
    { java: 19, archived: false, args: ['-XX:+AutoCreateSharedArchive', '-XX:SharedArchiveFile=a.jsa'] },
    { java: 17, archived: false, args: ['-XX:ArchiveClassesAtExit=a.jsa'] },
    { java: 17, archived: true, args: ['-XX:SharedArchiveFile=a.jsa'] },
    { java: 13, archived: true, args: ['-XX:SharedArchiveFile=a.jsa'] },
    { java: 11, archived: false, args: [] },
  ])('Java $java, archive there: $archived', ({ java, archived, args }) => {
    expect(classDataSharingArgs(java, 'a.jsa', archived)).toEqual(args);
  });
});

describe('a whole archive', () => {
  it('starts with the dynamic archive magic number; a zeroed or short header does not', () => {
    expect(isWholeArchive(Buffer.from([0xa8, 0xab, 0x0b, 0xf0]))).toBe(true);
    expect(isWholeArchive(Buffer.alloc(4))).toBe(false);
    expect(isWholeArchive(Buffer.from([0xa8, 0xba]))).toBe(false);
  });
});

describe("the stack's archive of a JVM", () => {
  const home = mkdtempSync(join(tmpdir(), 'stagefront-cds-'));
  const layout = stackLayout({ STACK_HOME: home });
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  /** A `java` that says what a Java 17 build says, whatever Java this machine has. */
  const java17 = join(home, 'java17');
  writeFileSync(java17, '#!/bin/sh\necho \'openjdk version "17.0.17" 2025-10-21\' >&2\n');
  chmodSync(java17, 0o755);
  const archiveOf = (args: string[]) => /=(.*\.(?:jsa|part))$/.exec(args.at(-1) ?? '')?.[1];

  const whole = Buffer.from([0xa8, 0xab, 0x0b, 0xf0, 0x01, 0x02]);
  const dumpOf = (args: string[]) => /^-XX:ArchiveClassesAtExit=(.*\.part)$/.exec(args.at(-1) ?? '')?.[1];

  it('is dumped at exit the first time, to a file of its own, made the archive and mapped at the next start (Java 17, the Kafka and Connect JVMs)', () => {
    const first = stackClassDataSharing(layout, 'connect', java17, '/dist/kafka/libs/*');
    expect(first).toHaveLength(1);
    const dump = dumpOf(first)!;
    expect(dump.startsWith(jvmArchiveDir(layout))).toBe(true);
    writeFileSync(dump, whole);
    const next = stackClassDataSharing(layout, 'connect', java17, '/dist/kafka/libs/*');
    const archive = archiveOf(next)!;
    expect(next).toEqual([`-XX:SharedArchiveFile=${archive}`]);
    expect(readFileSync(archive)).toEqual(whole);
    expect(existsSync(dump)).toBe(false);
  });

  it('lives beside the jars, in the dist folder, so stacks of their own homes on the same dist share it', () => {
    const other = stackLayout({ STACK_HOME: join(home, 'other-home'), STACK_DIST: layout.dist });
    expect(jvmArchiveDir(other)).toBe(jvmArchiveDir(layout));
    expect(jvmArchiveDir(layout).startsWith(layout.dist)).toBe(true);
  });

  it('two JVMs that stopped at once dumped two files: one becomes the archive, the other is deleted', () => {
    const a = dumpOf(stackClassDataSharing(layout, 'kafka-7', java17, '/dist/kafka/libs/*'))!;
    const b = dumpOf(stackClassDataSharing(layout, 'kafka-7', java17, '/dist/kafka/libs/*'))!;
    expect(a).not.toBe(b);
    writeFileSync(a, whole);
    writeFileSync(b, whole);
    const archive = archiveOf(stackClassDataSharing(layout, 'kafka-7', java17, '/dist/kafka/libs/*'))!;
    expect(existsSync(archive)).toBe(true);
    expect([existsSync(a), existsSync(b)]).toEqual([false, false]);
  });

  it('keeps a dump without its header while it may still be being written, and deletes it once it is old', () => {
    const dump = dumpOf(stackClassDataSharing(layout, 'kafka-8', java17, '/dist/kafka/libs/*'))!;
    writeFileSync(dump, Buffer.alloc(64));
    expect(dumpOf(stackClassDataSharing(layout, 'kafka-8', java17, '/dist/kafka/libs/*'))).toBeDefined();
    expect(existsSync(dump)).toBe(true);
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(dump, hourAgo, hourAgo);
    stackClassDataSharing(layout, 'kafka-8', java17, '/dist/kafka/libs/*');
    expect(existsSync(dump)).toBe(false);
  });

  it('is written again where the archive has no header (cut short), the torn file deleted', () => {
    const dump = dumpOf(stackClassDataSharing(layout, 'kafka', java17, '/dist/kafka/libs/*'))!;
    writeFileSync(dump, whole);
    const archive = archiveOf(stackClassDataSharing(layout, 'kafka', java17, '/dist/kafka/libs/*'))!;
    writeFileSync(archive, Buffer.alloc(64));
    expect(dumpOf(stackClassDataSharing(layout, 'kafka', java17, '/dist/kafka/libs/*'))).toBeDefined();
    expect(existsSync(archive)).toBe(false);
  });

  it('is another file for another JVM name or class path, so an upgrade never maps a stale one', () => {
    const of = (name: string, classPath: string) =>
      stackClassDataSharing(layout, name, java17, classPath)[0]!
        .replace(/^-XX:\w+=/, '')
        .replace(/\.[0-9a-f-]+\.part$/, '.jsa');
    const connect = of('connect', '/dist/kafka/libs/*');
    expect(of('connect-2', '/dist/kafka/libs/*')).not.toBe(connect);
    expect(of('connect', '/dist/kafka-4.4/libs/*')).not.toBe(connect);
    expect(of('connect', '/dist/kafka/libs/*')).toBe(connect);
  });

  it('is another file once a jar of the class path changes (an upgrade in the same folder), and the old one is deleted', () => {
    const libs = join(home, 'libs');
    mkdirSync(libs);
    writeFileSync(join(libs, 'kafka-clients-4.3.1.jar'), 'old');
    const of = () => archiveOf(stackClassDataSharing(layout, 'connect', java17, `${libs}/*`))!;
    const dump = of();
    writeFileSync(dump, whole);
    const before = of();
    expect(before).toMatch(/\.jsa$/);
    expect(of()).toBe(before);
    rmSync(join(libs, 'kafka-clients-4.3.1.jar'));
    writeFileSync(join(libs, 'kafka-clients-4.4.0.jar'), 'new');
    const after = of();
    expect(after).not.toBe(before);
    expect(existsSync(before)).toBe(false);
  });

  it('is left out when the Java command does not run', () => {
    expect(stackClassDataSharing(layout, 'registry', join(home, 'no-java'), 'app.jar')).toEqual([]);
  });
});
