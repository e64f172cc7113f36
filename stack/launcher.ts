import type { Logger } from '../lib/logger.js';
import { alertmanagerComponent } from './alertmanager.js';
import { ensureArtifacts, ensurePostgresBinaries } from './artifacts.js';
import type { Component } from './component.js';
import { stackLayout, type StackLayout } from './config.js';
import { connectComponents } from './connect.js';
import { kafkaComponents } from './kafka.js';
import { postgresComponent } from './postgres.js';
import { postgresEndpointComponent } from './postgres-endpoint.js';
import { postgresStandbyComponent } from './postgres-standby.js';
import { prometheusComponent } from './prometheus.js';
import { ensurePrerequisites } from './prerequisites.js';
import { sleep as pause } from '../lib/wait.js';
import { portOpen, residentBytes, tailFile } from './processes.js';
import { ensurePrivateDir } from './private-dir.js';
import { registryComponent } from './registry.js';

export function stackComponents(layout: StackLayout): Component[] {
  const standby = layout.settings.postgresStandby
    ? [postgresStandbyComponent(layout), postgresEndpointComponent(layout)]
    : [];
  return [
    postgresComponent(layout),
    ...standby,
    ...kafkaComponents(layout),
    registryComponent(layout),
    ...connectComponents(layout),
    alertmanagerComponent(layout),
    prometheusComponent(layout),
  ];
}

/**
 * The stack home, created owner-only (as root 0711: the postgres OS user reaches its cluster folder
 * inside it, lists nothing), or refused when another user could have made it. A symbolic link to a
 * folder of ours is fine (checkouts sharing one stack).
 */
export function ensureStackHome(layout: StackLayout): void {
  ensurePrivateDir(layout.home, { mode: process.getuid?.() === 0 ? 0o711 : 0o700, followSymlink: true });
}

/**
 * Brings the whole stack up, idempotently: what is healthy is reused, what is starting is waited
 * for, what is missing is started. Components start as soon as their dependencies are healthy.
 */
export async function startStack(logger: Logger, layout: StackLayout = stackLayout()): Promise<void> {
  ensureStackHome(layout);
  const components = stackComponents(layout);
  // Every component asked at once: when the whole stack runs as configured, nothing else is needed
  // (no Java, Maven or Postgres binaries looked for, no download checked), so a start costs well
  // under a second. Otherwise each component's own step, in dependency order, asks again.
  const reusable = await Promise.all(components.map(reusableAsIs));
  if (reusable.every(Boolean)) {
    await Promise.all(components.map((component) => reuse(component, logger)));
    return;
  }
  ensurePrerequisites(logger, { installMissing: layout.settings.installMissing });
  await ensureArtifacts(layout, logger);
  await ensurePostgresBinaries(layout, logger);
  const started = new Map<string, Promise<void>>();
  const startOne = (component: Component): Promise<void> => {
    const existing = started.get(component.name);
    if (existing) return existing;
    const deps = components.filter((c) => component.dependsOn.includes(c.name));
    const run = Promise.all(deps.map(startOne)).then(() => ensureRunning(component, layout, logger));
    started.set(component.name, run);
    return run;
  };
  await Promise.all(components.map(startOne));
}

/** Healthy, and either not a process of this stack or one started with the configuration it would get now. */
async function reusableAsIs(component: Component): Promise<boolean> {
  return (await component.healthy()) && runsAsConfigured(component);
}

/** Not a process of this stack, or one started with the configuration it would get now. */
function runsAsConfigured(component: Component): boolean {
  return component.pid() === undefined || component.outdated?.() !== true;
}

/** A component that runs as configured: kept, and configured again (idempotent) when it is a process of ours. */
async function reuse(component: Component, logger: Logger): Promise<void> {
  logger.child({ component: component.name, port: component.port }).info('already running and healthy');
  if (component.pid() !== undefined) await component.configure?.();
}

/** Brings one component up (the start's own step): reused when healthy, launched when missing, then configured. */
export async function ensureRunning(component: Component, layout: StackLayout, logger: Logger): Promise<void> {
  const log = logger.child({ component: component.name, port: component.port });
  if (await component.healthy()) {
    if (runsAsConfigured(component)) {
      await reuse(component, logger);
      return;
    }
    log.warn('running with an older configuration of this project; restarting it');
    await component.stop();
  }
  if (component.pid() === undefined) {
    if (await portOpen(component.port)) {
      throw new Error(
        `${component.name}: port ${component.port} is held by a process this stack did not start; ` +
          `stop that process or choose another port (see npm run stack -- --help)`,
      );
    }
    log.info('starting');
    await component.launch();
  } else {
    log.info({ pid: component.pid() }, 'process is up; waiting until it is healthy');
  }
  await waitHealthy(component, layout.settings.readyTimeoutMs);
  await component.configure?.();
  log.info({ pid: component.pid() }, 'healthy');
}

async function waitHealthy(component: Component, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await component.healthy()) return;
    if (component.pid() === undefined && !(await portOpen(component.port))) {
      await pause(500); // a process that exited during start-up does not come back
      if (component.pid() === undefined) {
        throw new Error(
          `${component.name} exited during start-up; last log lines (${component.logFile}):\n${tailFile(component.logFile)}`,
        );
      }
    }
    await pause(500);
  }
  throw new Error(
    `${component.name} did not become healthy within ${timeoutMs} ms; last log lines (${component.logFile}):\n${tailFile(component.logFile)}`,
  );
}

/** Stops every component the stack started, in reverse order, and checks that their ports are free. */
export async function stopStack(logger: Logger, layout: StackLayout = stackLayout()): Promise<void> {
  for (const component of stackComponents(layout).reverse()) {
    const pid = component.pid();
    if (pid === undefined) continue;
    logger.info({ component: component.name, pid }, 'stopping');
    await component.stop();
  }
  for (const component of stackComponents(layout)) {
    if (await portOpen(component.port)) {
      logger.warn(
        { component: component.name, port: component.port },
        'port still held after stop (not a process of this stack?)',
      );
    }
  }
}

export interface ComponentStatus {
  name: string;
  port: number;
  pid: number | undefined;
  healthy: boolean;
  residentMb: number | undefined;
  logFile: string;
}

export async function stackStatus(layout: StackLayout = stackLayout()): Promise<ComponentStatus[]> {
  return Promise.all(
    stackComponents(layout).map(async (c) => {
      const pid = c.pid();
      const rss = pid === undefined ? undefined : residentBytes(pid);
      return {
        name: c.name,
        port: c.port,
        pid,
        healthy: await c.healthy(),
        residentMb: rss === undefined ? undefined : Math.round(rss / 1024 / 1024),
        logFile: c.logFile,
      };
    }),
  );
}
