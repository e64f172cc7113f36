/**
 * docker-compose.yml as the compose tests read it: parsed YAML (anchors and merge keys resolved,
 * as docker compose does), each service's environment as strings, the npm scripts its command
 * runs, and the settings tables of the programs behind those scripts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { connectorSettings } from '../../connectors/settings.js';
import { confirmationEmailSettings } from '../../consumers/confirmation-email/consumer.js';
import { salesLedgerSettings } from '../../consumers/sales-ledger/consumer.js';
import { seatAvailabilitySettings } from '../../consumers/seat-availability/consumer.js';
import { composeSetupSettings } from '../../compose/setup-settings.js';
import { parseSettings, type SettingsDefinition, type SettingsTable } from '../../lib/settings.js';
import { jobWatchdogSettings } from '../../monitors/job-watchdog/settings.js';
import { slotMonitorSettings } from '../../monitors/slot-monitor/settings.js';
import { parseRehearsalConfig, rehearsalSettings } from '../../rehearsal/settings.js';
import { seatServiceSettings } from '../../seat-service/settings.js';
import { holdSweeperSettings } from '../../seat-service/sweeper-settings.js';
import { projectRoot } from '../../stack/config.js';

const COMPOSE_FILE = join(projectRoot, 'docker-compose.yml');

interface ComposeHealthcheck {
  test?: string[] | string;
}

export interface ComposeService {
  image?: string;
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: ComposeHealthcheck;
  volumes?: (string | { type?: string; source?: string; target?: string })[];
  ports?: (string | number | object)[];
  restart?: string;
  deploy?: { replicas?: number };
  container_name?: string;
}

export interface ComposeFile {
  name?: string;
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** The file as YAML text. */
export function composeText(file = COMPOSE_FILE): string {
  return readFileSync(file, 'utf8');
}

/** The file as docker compose sees it after YAML anchors and `<<` merge keys. */
export function loadCompose(text = composeText()): ComposeFile {
  return parse(text, { merge: true }) as ComposeFile;
}

/** A service's environment as the container gets it: every value a string. */
export function serviceEnv(service: ComposeService): Record<string, string> {
  const env: Record<string, string> = {};
  if (Array.isArray(service.environment)) {
    for (const entry of service.environment) {
      const [name = '', ...value] = entry.split('=');
      env[name] = value.join('=');
    }
    return env;
  }
  for (const [name, value] of Object.entries(service.environment ?? {}))
    env[name] = value === null ? '' : String(value);
  return env;
}

/** image → tag, for an image reference like quay.io/debezium/connect:3.6.1.Final. */
export function splitImage(reference: string): { image: string; tag: string } {
  const at = reference.lastIndexOf(':');
  if (at <= reference.lastIndexOf('/')) return { image: reference, tag: '' };
  return { image: reference.slice(0, at), tag: reference.slice(at + 1) };
}

/** One step of a service command: an npm script it runs, or `npm ci` (installing packages). */
export type CommandStep = { kind: 'script'; script: string } | { kind: 'npm-ci' } | { kind: 'other'; text: string };

function npmStep(words: string[]): CommandStep {
  if (words[0] !== 'npm') return { kind: 'other', text: words.join(' ') };
  if (words[1] === 'ci') return { kind: 'npm-ci' };
  if (words[1] !== 'run') return { kind: 'other', text: words.join(' ') };
  const script = words.slice(2).find((word) => !word.startsWith('-'));
  return script === undefined ? { kind: 'other', text: words.join(' ') } : { kind: 'script', script };
}

/**
 * The steps of a command: `["npm", "run", "-s", X, ...]` is one script; `["sh", "-c", "a && b"]`
 * is each `&&`-joined part. Anything else is an 'other' step (the tests allow none).
 */
export function commandSteps(command: ComposeService['command']): CommandStep[] {
  if (command === undefined) return [];
  const words = Array.isArray(command) ? command : command.split(/\s+/);
  if (words[0] === 'sh' && words[1] === '-c' && words.length === 3) {
    return (words[2] ?? '').split('&&').map((part) => npmStep(part.trim().split(/\s+/)));
  }
  return [npmStep(words)];
}

/** The npm scripts a command runs, in order. */
export function commandScripts(command: ComposeService['command']): string[] {
  return commandSteps(command).flatMap((step) => (step.kind === 'script' ? [step.script] : []));
}

export interface ScriptProgram {
  /** Every settings table the program reads its environment through. */
  settings: SettingsDefinition<SettingsTable>[];
  /** Parses the environment the way the program does at start; throws ConfigError when it would refuse to start. */
  parse: (env: Record<string, string>) => unknown;
}

const single = (def: SettingsDefinition<SettingsTable>): ScriptProgram => ({
  settings: [def],
  parse: (env) => parseSettings(def, env),
});

/**
 * The programs behind the npm scripts compose runs. A script compose runs that is missing here
 * fails the tests: add its settings table.
 */
export const SCRIPT_PROGRAMS: Readonly<Record<string, ScriptProgram>> = {
  'compose:setup': single(composeSetupSettings),
  connector: single(connectorSettings),
  'consumer:seat-availability': single(seatAvailabilitySettings),
  'consumer:confirmation-email': single(confirmationEmailSettings),
  'consumer:sales-ledger': single(salesLedgerSettings),
  'slot-monitor': single(slotMonitorSettings),
  'hold-sweeper': single(holdSweeperSettings),
  'job-watchdog': single(jobWatchdogSettings),
  // External mode: the crowd calls the seat service in-process (its settings from the
  // environment) and reads the connector's slot name (it supplies the connector's database URL itself).
  rehearsal: {
    settings: [rehearsalSettings, seatServiceSettings, connectorSettings],
    parse: (env) => [parseRehearsalConfig(env), parseSettings(seatServiceSettings, env)],
  },
};

/** Names of every variable the programs behind `scripts` read. */
export function variablesRead(scripts: string[]): Set<string> {
  return new Set(
    scripts
      .flatMap((script) => SCRIPT_PROGRAMS[script]?.settings ?? [])
      .flatMap((def) => Object.values(def.settings).map((s) => s.env)),
  );
}

/** depends_on as name → condition. */
export function dependencies(service: ComposeService): Record<string, string> {
  const deps = service.depends_on ?? {};
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((name) => [name, 'service_started']));
  return Object.fromEntries(Object.entries(deps).map(([name, dep]) => [name, dep.condition ?? 'service_started']));
}

/** The healthcheck's test as one string. */
export function healthcheckText(service: ComposeService): string {
  const test = service.healthcheck?.test;
  if (test === undefined) return '';
  return Array.isArray(test) ? test.join(' ') : test;
}
