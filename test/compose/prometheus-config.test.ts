/**
 * Prometheus and Grafana in docker compose: compose/prometheus.yml passes promtool, scrapes every
 * program service on the port its settings give it (the native stack's jobs and ports,
 * SCRAPE_PORTS), sends alerts to the alertmanager service, loads the mounted rules; Grafana's
 * provisioning (monitors/grafana/) points at that Prometheus and at the mounted dashboards.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { projectRoot, stackSettings } from '../../stack/config.js';
import { SCRAPE_PORTS } from '../../stack/prometheus-config.js';
import { SCRIPT_PROGRAMS, commandScripts, loadCompose, serviceEnv, type ComposeService } from './compose-model.js';

const compose = loadCompose();
const CONFIG_FILE = join(projectRoot, 'compose', 'prometheus.yml');

interface DnsSdConfig {
  names: string[];
  type: string;
  port: number;
}

interface PrometheusYaml {
  global: { scrape_interval: string; evaluation_interval: string };
  rule_files: string[];
  alerting: { alertmanagers: { static_configs: { targets: string[] }[] }[] };
  scrape_configs: { job_name: string; dns_sd_configs?: DnsSdConfig[]; static_configs?: unknown[] }[];
}

const config = parse(readFileSync(CONFIG_FILE, 'utf8')) as PrometheusYaml;

function service(name: string): ComposeService {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
}

/** host path → container path of a service's bind mounts. */
function mounts(s: ComposeService): Map<string, string> {
  return new Map(
    (s.volumes ?? [])
      .filter((v): v is string => typeof v === 'string')
      .map((v) => [v.split(':')[0] ?? '', v.split(':')[1] ?? '']),
  );
}

/** The container port published for `service`, from its `host:port:containerPort` mappings. */
function containerPorts(s: ComposeService): number[] {
  return (s.ports ?? []).map((p) => Number(String(p).split(':').at(-1)));
}

/** The scrape job a program service belongs to, named like the native stack's. */
function scrapeJob(script: string): string {
  return script.startsWith('consumer:') ? 'consumers' : script;
}

describe('compose/prometheus.yml', () => {
  it('passes promtool check config', () => {
    const result = spawnSync('promtool', ['check', 'config', '--syntax-only', CONFIG_FILE], { encoding: 'utf8' });
    if (result.error)
      throw new Error(
        `promtool could not run (${result.error.message}); install it with: sudo apt-get install prometheus`,
      );
    expect(`${result.stdout}${result.stderr}`).toContain('SUCCESS');
    expect(result.status).toBe(0);
  });

  it("scrapes every program service, found in Docker's DNS, on the port its settings give it: the native stack's jobs and ports", () => {
    const scraped = config.scrape_configs.flatMap((job) => {
      expect(job.static_configs, `${job.job_name}: static targets reach one replica only`).toBeUndefined();
      return (job.dns_sd_configs ?? []).flatMap((sd) =>
        sd.names.map((name) => `${job.job_name} ${name}:${sd.port} ${sd.type}`),
      );
    });
    const expected = Object.entries(compose.services).flatMap(([name, s]) => {
      const [script] = commandScripts(s.command);
      const program = script === undefined ? undefined : SCRIPT_PROGRAMS[script];
      if (script === undefined || program === undefined) return [];
      const parsed = program.parse(serviceEnv(s)) as { metricsPort?: number };
      return parsed.metricsPort === undefined ? [] : [`${scrapeJob(script)} ${name}:${parsed.metricsPort} A`];
    });
    expect(scraped.sort()).toEqual(expected.sort());
    const ports = Object.fromEntries(
      Object.keys(SCRAPE_PORTS).map((job) => [
        job,
        scraped
          .filter((t) => t.startsWith(`${job} `))
          .map((t) => Number(/:(\d+) /.exec(t)?.[1]))
          .sort(),
      ]),
    );
    expect(ports).toEqual(Object.fromEntries(Object.entries(SCRAPE_PORTS).map(([job, p]) => [job, [...p].sort()])));
  });

  it('sends alerts to the alertmanager service on its container port', () => {
    const targets = config.alerting.alertmanagers.flatMap((am) => am.static_configs.flatMap((sc) => sc.targets));
    expect(targets).toEqual([`alertmanager:${containerPorts(service('alertmanager'))[0]}`]);
  });

  it("loads every rules file of monitors/prometheus through the mount, with the native stack's interval", () => {
    const prometheus = service('prometheus');
    const mounted = mounts(prometheus);
    expect(mounted.get('./compose/prometheus.yml')).toBe('/etc/prometheus/prometheus.yml');
    expect(prometheus.command).toContain('--config.file=/etc/prometheus/prometheus.yml');
    const rulesDir = mounted.get('./monitors/prometheus');
    expect(config.rule_files).toEqual([`${rulesDir}/*.rules.yml`]);
    expect(
      readdirSync(join(projectRoot, 'monitors/prometheus')).filter((f) => f.endsWith('.rules.yml')).length,
    ).toBeGreaterThan(0);
    const nativeInterval = `${Number(stackSettings.settings.prometheusIntervalMs.default) / 1000}s`;
    expect(config.global).toEqual({ scrape_interval: nativeInterval, evaluation_interval: nativeInterval });
  });
});

describe('Grafana in compose', () => {
  const grafana = service('grafana');
  const mounted = mounts(grafana);
  const provisioning = join(projectRoot, 'monitors/grafana/provisioning');

  it('mounts the provisioning folder and the dashboards where the dashboard provider reads them', () => {
    expect(mounted.get('./monitors/grafana/provisioning')).toBe('/etc/grafana/provisioning');
    const dashboardsPath = mounted.get('./monitors/grafana/dashboards');
    const providers = readdirSync(join(provisioning, 'dashboards')).flatMap(
      (file) =>
        (
          parse(readFileSync(join(provisioning, 'dashboards', file), 'utf8')) as {
            providers: { options: { path: string } }[];
          }
        ).providers,
    );
    expect(providers.length).toBeGreaterThan(0);
    for (const provider of providers) expect(provider.options.path).toBe(dashboardsPath);
  });

  it('queries the prometheus service on its container port, at its scrape interval', () => {
    const datasources = readdirSync(join(provisioning, 'datasources')).flatMap(
      (file) =>
        (
          parse(readFileSync(join(provisioning, 'datasources', file), 'utf8')) as {
            datasources: { type: string; url: string; jsonData?: { timeInterval?: string } }[];
          }
        ).datasources,
    );
    const prometheus = datasources.filter((ds) => ds.type === 'prometheus');
    expect(prometheus.length).toBeGreaterThan(0);
    for (const ds of prometheus) {
      expect(ds.url).toBe(`http://prometheus:${containerPorts(service('prometheus'))[0]}`);
      expect(ds.jsonData?.timeInterval ?? config.global.scrape_interval).toBe(config.global.scrape_interval);
    }
  });

  it('opens on a dashboard that exists', () => {
    const home = serviceEnv(grafana).GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH ?? '';
    const dashboardsPath = mounted.get('./monitors/grafana/dashboards') ?? '';
    expect(home.startsWith(`${dashboardsPath}/`)).toBe(true);
    expect(existsSync(join(projectRoot, 'monitors/grafana/dashboards', home.slice(dashboardsPath.length + 1)))).toBe(
      true,
    );
  });
});
