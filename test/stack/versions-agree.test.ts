import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { distPaths } from '../../stack/artifacts.js';
import { projectRoot, readVersions, stackLayout } from '../../stack/config.js';
import { alertmanagerBinary, alertmanagerConfig } from '../../stack/alertmanager.js';
import { prometheusBinary } from '../../stack/prometheus.js';
import { requireStack } from '../support/stack.js';

requireStack();

/** image → tag, from the `image:` lines of docker-compose.yml. */
function composeImages(): Map<string, string> {
  const text = readFileSync(join(projectRoot, 'docker-compose.yml'), 'utf8');
  const images = new Map<string, string>();
  for (const match of text.matchAll(/^\s+image:\s*([^\s:]+(?:\/[^\s:]+)*):(\S+)\s*$/gm)) {
    images.set(match[1] ?? '', match[2] ?? '');
  }
  return images;
}

describe('docker compose and the native stack run the same versions (stack/versions.json)', () => {
  const versions = readVersions();
  const images = composeImages();

  it('docker-compose.yml uses the versions of stack/versions.json', () => {
    expect(images.get('postgres')).toBe(versions.postgres);
    expect(images.get('apache/kafka')).toBe(versions.kafka);
    expect(images.get('quay.io/debezium/connect')).toBe(versions.debezium);
    expect(images.get('apicurio/apicurio-registry')).toBe(versions.apicurio);
    expect(images.get('prom/alertmanager')).toBe(`v${versions.alertmanager}`);
    expect(images.get('prom/prometheus')).toBe(`v${versions.prometheus}`);
  });

  it('the native stack runs the same versions', () => {
    const dist = distPaths(stackLayout());
    expect(existsSync(join(dist.kafkaLibs, `kafka_${versions.scala}-${versions.kafka}.jar`))).toBe(true);
    expect(existsSync(join(dist.kafkaLibs, `connect-runtime-${versions.kafka}.jar`))).toBe(true);
    expect(
      existsSync(
        join(
          dist.connectPlugins,
          'debezium-connector-postgres',
          `debezium-connector-postgres-${versions.debezium}.jar`,
        ),
      ),
    ).toBe(true);
    expect(existsSync(join(dist.registryApp, '..', 'app', `apicurio-registry-app-${versions.apicurio}.jar`))).toBe(
      true,
    );
    const postgres = spawnSync('sh', ['-c', 'ls /usr/lib/postgresql'], { encoding: 'utf8' })
      .stdout.split('\n')
      .map(Number);
    expect(postgres.some((major) => major >= Number(versions.postgres))).toBe(true);
    const alertmanager = spawnSync(alertmanagerBinary() ?? 'alertmanager', ['--version'], { encoding: 'utf8' });
    expect(`${alertmanager.stdout}${alertmanager.stderr}`).toContain(`version ${versions.alertmanager}`);
    const prometheus = spawnSync(prometheusBinary() ?? 'prometheus', ['--version'], { encoding: 'utf8' });
    expect(`${prometheus.stdout}${prometheus.stderr}`).toContain(`version ${versions.prometheus}`);
  });

  it('docker compose mounts the Alertmanager configuration the native stack writes (monitors/alertmanager/alertmanager.yml)', () => {
    expect(readFileSync(join(projectRoot, 'monitors/alertmanager/alertmanager.yml'), 'utf8')).toBe(
      alertmanagerConfig(),
    );
    expect(readFileSync(join(projectRoot, 'docker-compose.yml'), 'utf8')).toContain(
      './monitors/alertmanager/alertmanager.yml:/etc/alertmanager/alertmanager.yml',
    );
  });
});
