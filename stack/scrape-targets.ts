/**
 * The local stack's Prometheus finds programs by files (file-based service discovery): each
 * long-running program started beside the running stack writes `<stack home>/prometheus/targets/
 * <job>/<program>-<pid>-<start>.json` naming its metrics address, and removes it when it stops.
 * So a consumer made by `npm run new-consumer`, on whatever port, is scraped under the job the
 * alert rules know (`consumers`) and gets the runtime's alerts without editing anything. A file
 * left by a process that died (kill -9) stays, so that its target reads down and its Down alert
 * fires, until a program of the same job starts or Prometheus is launched again: both clear the
 * files of processes that are gone (the process start time in the name tells a reused pid apart).
 *
 * Nothing is written unless the stack's Prometheus runs in this process's view of the machine (so
 * not from a container, Kubernetes, or beside a stopped stack), or with STACK_PROMETHEUS_TARGETS=no.
 */
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { ownedPid } from './component.js';
import { projectRoot, stackSettings } from './config.js';
import type { SCRAPE_PORTS } from './prometheus-config.js';

export type ScrapeJob = keyof typeof SCRAPE_PORTS;

const SWITCH = stackSettings.settings.prometheusTargets;

/** The setting that switches the announcement off (the test suite does: its throwaway programs are not the stack's). */
export const SCRAPE_TARGETS_SWITCH = SWITCH.env;

/** The folder Prometheus reads target files from, under a stack home. */
export function scrapeTargetsDir(home: string): string {
  return join(home, 'prometheus', 'targets');
}

/** Where the stack's Prometheus keeps its process id and its generated configuration (stack/prometheus.ts). */
export function prometheusFiles(home: string): { pidFile: string; configFile: string } {
  return { pidFile: join(home, 'run', 'prometheus.pid'), configFile: join(home, 'prometheus', 'prometheus.yml') };
}

/** The stack home as stackLayout resolves it (STACK_HOME, relative to the project root), without parsing every stack setting. */
function localStackHome(env: NodeJS.ProcessEnv): string {
  const home = env[stackSettings.settings.home.env] || stackSettings.settings.home.default;
  return isAbsolute(home) ? home : join(projectRoot, home);
}

/** When the process started (clock ticks since boot, /proc/<pid>/stat field 22); undefined when it is not running. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

const TARGET_FILE = /-(\d+)-(\d+)\.json(\.tmp)?$/;

/** Removes the files (and half-written ones) of processes that are gone from a job's folder. */
export function clearStaleTargets(folder: string): void {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = TARGET_FILE.exec(name);
    if (owner === null) continue;
    if (processStart(Number(owner[1])) !== owner[2]) rmSync(join(folder, name), { force: true });
  }
}

/**
 * The file_sd contents for one target, from the program's endpoint URL: the address alone (a
 * program listening on every interface or on `localhost` is scraped on 127.0.0.1), so that a
 * target the static configuration names too is one target.
 */
export function targetFile(endpointUrl: string): string {
  const url = new URL(endpointUrl);
  const host = ['0.0.0.0', '[::]', 'localhost'].includes(url.hostname) ? '127.0.0.1' : url.hostname;
  return `${JSON.stringify([{ targets: [`${host}:${url.port}`], labels: {} }])}\n`;
}

export interface Announcement {
  file: string;
  withdraw(): void;
}

/** True when the setting allows it; a value that is not a yes or a no switches it off too. */
function switchedOn(env: NodeJS.ProcessEnv): boolean {
  const parsed = SWITCH.parser.schema.safeParse(env[SWITCH.env] || SWITCH.default);
  return parsed.success && parsed.data === true;
}

/**
 * Tells the local stack's Prometheus where this program's /metrics is; undefined when that
 * Prometheus does not run here or the announcement is switched off. Never throws: scraping is a
 * convenience, not a reason for a program not to run.
 */
export function announceScrapeTarget(options: {
  job: ScrapeJob;
  program: string;
  /** The program's /metrics server, `http://host:port`. */
  endpointUrl: string;
  env?: NodeJS.ProcessEnv;
  pid?: number;
}): Announcement | undefined {
  const env = options.env ?? process.env;
  if (!switchedOn(env)) return undefined;
  const home = localStackHome(env);
  const prometheus = prometheusFiles(home);
  if (ownedPid(prometheus.pidFile, prometheus.configFile) === undefined) return undefined;
  const pid = options.pid ?? process.pid;
  const start = processStart(pid);
  if (start === undefined) return undefined;
  try {
    const folder = join(scrapeTargetsDir(home), options.job);
    mkdirSync(folder, { recursive: true });
    clearStaleTargets(folder);
    const file = join(folder, `${options.program.replace(/[^\w.-]/g, '_')}-${pid}-${start}.json`);
    // Prometheus watches the folder: it must never read a half-written file.
    writeFileSync(`${file}.tmp`, targetFile(options.endpointUrl));
    renameSync(`${file}.tmp`, file);
    return {
      file,
      withdraw: () => {
        try {
          rmSync(file, { force: true });
        } catch {
          // Left for the next program of the job, or the next launch of Prometheus, to clear.
        }
      },
    };
  } catch {
    return undefined;
  }
}
