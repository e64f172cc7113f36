/** Builds and runs interop/java-seat-reader (a Java 17 program) for the interop tests. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../stack/config.js';
import { runMaven } from '../../stack/artifacts.js';
import { track } from '../support/leak-guard.js';
import { testLogger } from '../support/seat-pipeline.js';

const readerDir = join(projectRoot, 'interop', 'java-seat-reader');
const readerJar = join(readerDir, 'target', 'java-seat-reader.jar');

/** One line the reader printed: the event's place, its CloudEvent attributes and its decoded data. */
export interface JavaEventLine {
  topic: string;
  partition: number;
  offset: number;
  key: string;
  id: string;
  type: string;
  source: string;
  subject: string;
  time: string;
  datacontenttype: string;
  dataschema: string | null;
  data: Record<string, unknown>;
}

export interface JavaReaderRun {
  code: number | null;
  events: JavaEventLine[];
  /** stderr lines the reader itself wrote (`java-seat-reader: …`), without the Kafka client's log. */
  messages: string[];
  stderr: string;
}

/** The newest modification time of the reader's pom and sources. */
function newestSourceMs(): number {
  const files = [
    join(readerDir, 'pom.xml'),
    ...readdirSync(join(readerDir, 'src'), { recursive: true, encoding: 'utf8' }).map((f) => join(readerDir, 'src', f)),
  ];
  return Math.max(...files.map((file) => statSync(file).mtimeMs));
}

/**
 * `mvn -q package`, as the stack resolves its own jars: the first run on a machine resolves the
 * dependencies from Maven Central into the local repository, later runs find everything there. A
 * jar newer than the pom and every source is used as it is (shading it again takes half a minute
 * on a busy 2-core machine).
 */
export async function buildJavaReader(): Promise<string> {
  if (existsSync(readerJar) && statSync(readerJar).mtimeMs > newestSourceMs()) return readerJar;
  await runMaven(['-B', '-q', '--no-transfer-progress', '-f', join(readerDir, 'pom.xml'), 'package'], testLogger).catch(
    (cause: unknown) => {
      throw new Error(
        `building interop/java-seat-reader failed: ${cause instanceof Error ? cause.message : String(cause)}`,
        { cause },
      );
    },
  );
  return readerJar;
}

/** Runs the built reader with these flags until it exits (killed after `timeoutMs`). */
export async function runJavaReader(args: string[], timeoutMs = 90_000): Promise<JavaReaderRun> {
  const child = spawn('java', ['-Xmx128m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-jar', readerJar, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = track('java-seat-reader', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    const [code] = (await once(child, 'exit')) as [number | null];
    return {
      code,
      events: stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as JavaEventLine),
      messages: stderr.split('\n').filter((line) => line.startsWith('java-seat-reader: ')),
      stderr,
    };
  } finally {
    clearTimeout(timer);
    await stop();
  }
}
