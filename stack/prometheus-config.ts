/**
 * prometheus.yml for the stack, generated (written as JSON, which is YAML): what it scrapes, the
 * rules it loads and where its alerts go. It scrapes the programs' default ports and the target
 * files that programs running beside the stack write (stack/scrape-targets.ts). docker compose has
 * its own file (compose/prometheus.yml: its programs are services found in Docker's DNS);
 * test/compose/ checks it against SCRAPE_PORTS.
 */

/** Scrape job → the default metrics ports of its programs (a test checks them against their settings tables). */
export const SCRAPE_PORTS = {
  'slot-monitor': [9188],
  'job-watchdog': [9189],
  'hold-sweeper': [9190],
  consumers: [9471, 9472, 9473],
} as const satisfies Record<string, readonly number[]>;

export interface PrometheusConfigOptions {
  /** Host the scraped programs run on (127.0.0.1 natively). */
  targetHost: string;
  /** host:port of Alertmanager. */
  alertmanager: string;
  /** Glob(s) of the rule files. */
  ruleFiles: string[];
  /** Prometheus duration, e.g. 15s. */
  scrapeInterval: string;
  evaluationInterval: string;
  /** Replaces the default scrape targets (tests point jobs at ports of their own). */
  scrapeJobs?: Record<string, string[]>;
  /**
   * A folder of target files, one subfolder per job (stack/scrape-targets.ts): each job also
   * scrapes what the programs running beside the stack announce there.
   */
  targetsDir?: string;
}

/** How soon a target file's change is seen when the folder watch misses it. */
const TARGET_FILES_REFRESH = '5s';

function defaultScrapeJobs(targetHost: string): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(SCRAPE_PORTS).map(([job, ports]) => [job, ports.map((port) => `${targetHost}:${port}`)]),
  );
}

export function prometheusConfig(options: PrometheusConfigOptions): string {
  const jobs = options.scrapeJobs ?? defaultScrapeJobs(options.targetHost);
  const config = {
    global: { scrape_interval: options.scrapeInterval, evaluation_interval: options.evaluationInterval },
    rule_files: options.ruleFiles,
    alerting: { alertmanagers: [{ static_configs: [{ targets: [options.alertmanager] }] }] },
    scrape_configs: Object.entries(jobs).map(([job, targets]) => ({
      job_name: job,
      static_configs: [{ targets }],
      ...(options.targetsDir === undefined
        ? {}
        : {
            file_sd_configs: [
              { files: [`${options.targetsDir}/${job}/*.json`], refresh_interval: TARGET_FILES_REFRESH },
            ],
          }),
    })),
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}
