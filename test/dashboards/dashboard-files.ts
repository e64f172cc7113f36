/**
 * The Grafana files as the tests see them: the dashboards in monitors/grafana/dashboards/ and the
 * two provisioning files, read without Grafana (which cannot run here).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { projectRoot } from '../../stack/config.js';

const grafanaDir = join(projectRoot, 'monitors', 'grafana');
const dashboardsDir = join(grafanaDir, 'dashboards');

interface PanelTarget {
  refId: string;
  expr: string;
  datasource?: { type?: string; uid?: string };
}

export interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  datasource?: { type?: string; uid?: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: PanelTarget[];
  fieldConfig?: { defaults?: { unit?: string } };
  /** Rows hold their panels here when collapsed. */
  panels?: Panel[];
}

export interface TemplateVariable {
  name: string;
  type: string;
  datasource?: { type?: string; uid?: string };
  definition?: string;
  includeAll?: boolean;
  allValue?: string;
}

export interface Dashboard {
  file: string;
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: TemplateVariable[] };
}

/** One query of one panel, named the way a failure message should name it. */
export interface PanelQuery {
  dashboard: Dashboard;
  panel: Panel;
  target: PanelTarget;
  /** `pipeline.json › "Consumer lag per topic" (panel 7) › A` */
  where: string;
}

export function loadDashboards(): Dashboard[] {
  const files = readdirSync(dashboardsDir)
    .filter((file) => file.endsWith('.json'))
    .sort();
  return files.map((file) => ({
    ...(JSON.parse(readFileSync(join(dashboardsDir, file), 'utf8')) as Omit<Dashboard, 'file'>),
    file,
  }));
}

/** Every panel, those inside collapsed rows included. */
export function allPanels(dashboard: Dashboard): Panel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

export function panelQueries(dashboards: Dashboard[]): PanelQuery[] {
  return dashboards.flatMap((dashboard) =>
    allPanels(dashboard).flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({
        dashboard,
        panel,
        target,
        where: `${dashboard.file} › "${panel.title}" (panel ${panel.id}) › ${target.refId}`,
      })),
    ),
  );
}

export interface ProvisionedDatasource {
  name: string;
  uid: string;
  type: string;
  url: string;
}

/** The datasources the provisioning files create. */
export function provisionedDatasources(): ProvisionedDatasource[] {
  return provisioningFiles('datasources').flatMap(
    (text) => (parse(text) as { datasources: ProvisionedDatasource[] }).datasources,
  );
}

/** The folders the provisioning files' dashboard providers load. */
export function dashboardProviderPaths(): string[] {
  return provisioningFiles('dashboards').flatMap((text) =>
    (parse(text) as { providers: { options: { path: string } }[] }).providers.map((p) => p.options.path),
  );
}

function provisioningFiles(kind: 'datasources' | 'dashboards'): string[] {
  const dir = join(grafanaDir, 'provisioning', kind);
  return readdirSync(dir)
    .filter((file) => /\.ya?ml$/.test(file))
    .map((file) => readFileSync(join(dir, file), 'utf8'));
}
