import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
  const archiveOf = (args: string[]) => /=(.*\.jsa)$/.exec(args.at(-1) ?? '')?.[1];

  it('is dumped at exit the first time and mapped once it exists (Java 17, the Kafka and Connect JVMs)', () => {
    const first = stackClassDataSharing(layout, 'connect', java17, '/dist/kafka/libs/*');
    expect(first).toHaveLength(1);
    expect(first[0]).toMatch(/^-XX:ArchiveClassesAtExit=/);
    const archive = archiveOf(first)!;
    expect(archive.startsWith(jvmArchiveDir(layout))).toBe(true);
    writeFileSync(archive, Buffer.from([0xa8, 0xab, 0x0b, 0xf0, 0x01, 0x02]));
    expect(stackClassDataSharing(layout, 'connect', java17, '/dist/kafka/libs/*')).toEqual([
      `-XX:SharedArchiveFile=${archive}`,
    ]);
  });

  it('is written again where a JVM killed while it dumped left it without its header', () => {
    const [first] = stackClassDataSharing(layout, 'kafka', java17, '/dist/kafka/libs/*');
    const archive = first!.slice(first!.indexOf('=') + 1);
    writeFileSync(archive, Buffer.alloc(64));
    expect(stackClassDataSharing(layout, 'kafka', java17, '/dist/kafka/libs/*')).toEqual([
      `-XX:ArchiveClassesAtExit=${archive}`,
    ]);
    expect(existsSync(archive)).toBe(false);
  });

  it('is another file for another JVM name or class path, so an upgrade never maps a stale one', () => {
    const of = (name: string, classPath: string) => archiveOf(stackClassDataSharing(layout, name, java17, classPath));
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
    const before = of();
    writeFileSync(before, Buffer.from([0xa8, 0xab, 0x0b, 0xf0]));
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
