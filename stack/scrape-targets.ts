/**
 * The local stack's Prometheus finds programs by files (file-based service discovery): each
 * long-running program started beside the stack writes `<stack home>/prometheus/targets/<job>/
 * <program>-<pid>.json` naming its metrics address, and removes it when it stops. So a consumer
 * made by `npm run new-consumer`, on whatever port, is scraped under the job the alert rules know
 * (`consumers`) and gets the runtime's alerts without editing anything. A file left by a process
 * that died (kill -9) stays, so that its target reads down and its Down alert fires, until a
 * program of the same job starts and clears the files of processes that are gone.
 *
 * Nothing is written where there is no local stack (no targets folder: Kubernetes, compose, a
 * machine without `npm run stack -- start`), or with STACK_PROMETHEUS_TARGETS=no.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { projectRoot, stackSettings } from './config.js';
import type { SCRAPE_PORTS } from './prometheus-config.js';

export type ScrapeJob = keyof typeof SCRAPE_PORTS;

/** Switches the announcement off (the test suite does: its throwaway programs are not the stack's). */
export const SCRAPE_TARGETS_SWITCH = 'STACK_PROMETHEUS_TARGETS';

/** The folder Prometheus reads target files from, under a stack home. */
export function scrapeTargetsDir(home: string): string {
  return join(home, 'prometheus', 'targets');
}

/** The stack home as stackLayout resolves it (STACK_HOME, relative to the project root), without parsing every stack setting. */
function localStackHome(env: NodeJS.ProcessEnv): string {
  const home = env[stackSettings.settings.home.env] || stackSettings.settings.home.default;
  return isAbsolute(home) ? home : join(projectRoot, home);
}

/** True when the process with this id is gone (a pid we may not signal still exists). */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * The file_sd contents for one target, from the program's endpoint URL: the address alone (a
 * program listening on every interface is scraped on loopback), so that a target the static
 * configuration names too is one target.
 */
export function targetFile(endpointUrl: string): string {
  const url = new URL(endpointUrl);
  const host = url.hostname === '0.0.0.0' || url.hostname === '[::]' ? '127.0.0.1' : url.hostname;
  return `${JSON.stringify([{ targets: [`${host}:${url.port}`], labels: {} }])}\n`;
}

export interface Announcement {
  file: string;
  withdraw(): void;
}

/**
 * Tells the local stack's Prometheus where this program's /metrics is; undefined when there is no
 * local stack or the announcement is switched off. Never throws: scraping is a convenience, not a
 * reason for a program not to run.
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
  if (env[SCRAPE_TARGETS_SWITCH] === 'no') return undefined;
  const root = scrapeTargetsDir(localStackHome(env));
  if (!existsSync(root)) return undefined;
  const pid = options.pid ?? process.pid;
  try {
    const folder = join(root, options.job);
    mkdirSync(folder, { recursive: true });
    for (const name of readdirSync(folder)) {
      const owner = /-(\d+)\.json$/.exec(name)?.[1];
      if (owner !== undefined && Number(owner) !== pid && gone(Number(owner)))
        rmSync(join(folder, name), { force: true });
    }
    const file = join(folder, `${options.program.replace(/[^\w.-]/g, '_')}-${pid}.json`);
    // Prometheus watches the folder: it must never read a half-written file.
    writeFileSync(`${file}.tmp`, targetFile(options.endpointUrl));
    renameSync(`${file}.tmp`, file);
    return { file, withdraw: () => rmSync(file, { force: true }) };
  } catch {
    return undefined;
  }
}
