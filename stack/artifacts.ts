import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { projectRoot, type StackLayout } from './config.js';

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
  logger.info({ versions: layout.versions }, 'fetching Kafka, Connect, Debezium and Apicurio with Maven (first start only)');
  await runMaven([
    '-B',
    '--no-transfer-progress',
    '-f', pom,
    'package',
    `-Dkafka.version=${layout.versions.kafka}`,
    `-Ddebezium.version=${layout.versions.debezium}`,
    `-Dapicurio.version=${layout.versions.apicurio}`,
    `-Dstack.home=${layout.dist}`,
  ], logger);
  writeFileSync(stamp, new Date().toISOString());
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
        if (/Downloading|Downloaded|Unpacking|Copying|BUILD|ERROR/.test(line)) logger.info({ maven: line.slice(0, 200) }, 'maven');
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
