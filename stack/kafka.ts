import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { distPaths } from './artifacts.js';
import type { Component } from './component.js';
import { ownedPid } from './component.js';
import type { StackLayout } from './config.js';
import { jvmPidFile, launchJvm, stopJvm } from './jvm.js';
import { runCommand } from './processes.js';

/** One Kafka node in KRaft mode, broker and controller in the same process. */
export function kafkaComponent(layout: StackLayout): Component {
  const s = layout.settings;
  const propertiesFile = join(layout.home, 'kafka', 'server.properties');
  const classpath = `${distPaths(layout).kafkaLibs}/*`;
  const pidFile = jvmPidFile(layout, 'kafka');
  return {
    name: 'kafka',
    port: s.kafkaPort,
    logFile: join(layout.logDir, 'kafka.log'),
    dependsOn: [],
    pid: () => ownedPid(pidFile, layout.home),
    healthy: () => answersMetadata(`127.0.0.1:${s.kafkaPort}`),
    async launch() {
      mkdirSync(join(layout.home, 'kafka'), { recursive: true });
      writeFileSync(propertiesFile, serverProperties(layout));
      formatStorage(layout, classpath, propertiesFile);
      launchJvm(layout, {
        name: 'kafka',
        heapMb: s.kafkaHeapMb,
        classpath,
        mainClass: 'kafka.Kafka',
        args: [propertiesFile],
      });
    },
    stop: () => stopJvm(ownedPid(pidFile, layout.home)),
  };
}

function serverProperties(layout: StackLayout): string {
  const s = layout.settings;
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${s.kafkaControllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${s.kafkaPort},CONTROLLER://127.0.0.1:${s.kafkaControllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${s.kafkaPort}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${layout.kafkaData}`,
    'num.partitions=3',
    'auto.create.topics.enable=false',
    'offsets.topic.replication.factor=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    'log.retention.hours=168',
    '',
  ].join('\n');
}

/** Formats the KRaft storage on first start only (meta.properties present means formatted). */
function formatStorage(layout: StackLayout, classpath: string, propertiesFile: string): void {
  if (existsSync(join(layout.kafkaData, 'meta.properties'))) return;
  const clusterId = randomBytes(16).toString('base64url');
  runCommand('java', [
    `-Dlog4j2.configurationFile=${join(layout.home, 'log4j2.properties')}`,
    '-cp', classpath, 'kafka.tools.StorageTool',
    'format', `--cluster-id=${clusterId}`, '--config', propertiesFile, '--ignore-formatted',
  ]);
}

async function answersMetadata(broker: string): Promise<boolean> {
  const admin = new Kafka({
    clientId: 'stack-health',
    brokers: [broker],
    connectionTimeout: 1500,
    requestTimeout: 3000,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
  }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length > 0;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
