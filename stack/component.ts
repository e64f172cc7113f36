import { readFileSync } from 'node:fs';
import { isAlive, readPid } from './processes.js';

/** One process of the native stack, as the launcher sees it. */
export interface Component {
  name: string;
  port: number;
  logFile: string;
  /** Process id of our running instance, if any (checked against its command line). */
  pid(): number | undefined;
  /** Answers its real protocol: a SQL query, Kafka metadata, a REST call. */
  healthy(): Promise<boolean>;
  /** Starts the process; the launcher calls it only when the component is not running. */
  launch(): Promise<void>;
  stop(): Promise<void>;
  /**
   * True when our running process was started with other settings than `launch` would give it
   * now (the project changed under a running stack): `start` restarts it. Absent: never.
   */
  outdated?(): boolean;
  /**
   * Brings what a running instance reloads without a restart up to date (access rules, grants);
   * the launcher calls it once the component is healthy, after a start and on one already running.
   */
  configure?(): Promise<void>;
  /** Names of components that must be healthy before this one starts. */
  dependsOn: string[];
}

/** The pid in `pidFile` when that process is alive and its command line mentions `marker`. */
export function ownedPid(pidFile: string, marker: string): number | undefined {
  const pid = readPid(pidFile);
  if (!isAlive(pid)) return undefined;
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    return cmdline.includes(marker) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** GET a URL with a short timeout (and these request headers); the response body on 2xx, undefined otherwise. */
export async function httpGet(
  url: string,
  timeoutMs = 5000,
  headers: Record<string, string> = {},
): Promise<string | undefined> {
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    const body = await response.text();
    return response.ok ? body : undefined;
  } catch {
    return undefined;
  }
}
