/**
 * `npm run new-consumer -- <name> [--events <name,…>] [--when-late keep-retrying|dead-letter]
 * [--deadline-ms <ms>] [--metrics-port <port>]`: a working consumer to start from —
 * consumers/<name>/ (definition and settings, main, its read model's first migration),
 * test/consumers/<name>.test.ts, the `consumer:<name>` script, its entry in
 * consumers/team-consumers.ts and its Kubernetes manifests — that passes its own test as
 * generated. It writes into the checkout it runs from and never overwrites anything.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { format, getFileInfo, resolveConfig } from 'prettier';
import { programs, tools } from '../deploy/kubernetes/programs.js';
import { EVENTS, type EventName } from '../events/catalogue.js';
import {
  KAFKA_ADMIN_USER,
  KAFKA_CONNECTOR_COMMAND_USER,
  KAFKA_CONNECT_USER,
  KAFKA_REDRIVE_USER,
} from '../lib/kafka-access.js';
import type { LatePolicy } from '../consumers/runtime/types.js';
import { buildPrograms } from '../lib/source-tree.js';
import { type ConsumerPlan, consumerFile, mainFile, migrationFile, testFile } from './new-consumer-templates.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const RESERVED = new Set(['runtime', 'migrations', 'redrive', 'helpers']);
const WHEN_LATE: readonly LatePolicy[] = ['keep-retrying', 'dead-letter'];
const FIRST_METRICS_PORT = 9474;

const USAGE = `Usage: npm run new-consumer -- <name> [options]

Generates a consumer on the consumer runtime that passes its own test as generated:
  consumers/<name>/consumer.ts                    definition, effects and settings
  consumers/<name>/main.ts                        the program
  consumers/<name>/migrations/000001_….sql        its read model, in Postgres schema <name with _>
  test/consumers/<name>.test.ts                   its test (the runtime's test kit: Postgres, no stack)
  package.json                                    the consumer:<name> script
  consumers/team-consumers.ts                     its entry: Kubernetes runs it (deploy/kubernetes/manifests/)

<name>: lower-case words joined by hyphens, e.g. seat-heatmap.

Options:
  --events <names>        catalogue events it handles, comma separated (default: all of them):
                          ${Object.keys(EVENTS).join(', ')}
  --when-late <policy>    keep-retrying (default: a read model is right however late) or
                          dead-letter (an effect that is wrong when late)
  --deadline-ms <ms>      how late its effects may be before an alert (default 300000)
  --metrics-port <port>   default port of its /metrics (default: the next after the other consumers')
  --help                  this text

Then: npx vitest run test/consumers/<name>.test.ts, and the guide, docs/writing-a-consumer.md.`;

class UsageError extends Error {}

function camelCase(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

function eventNames(text: string | undefined): EventName[] {
  if (text === undefined) return Object.keys(EVENTS) as EventName[];
  const names = text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  const byType = new Map<string, EventName>(
    Object.entries(EVENTS).map(([name, event]) => [event.type, name as EventName]),
  );
  const known = names.map((item) => (item in EVENTS ? (item as EventName) : byType.get(item)));
  const unknown = names.filter((_, index) => known[index] === undefined);
  if (unknown.length > 0 || names.length === 0) {
    throw new UsageError(
      `--events ${unknown.length > 0 ? `names unknown event type ${unknown.join(', ')}` : 'is empty'}; use catalogue names from events/catalogue.ts: ${Object.keys(EVENTS).join(', ')}.`,
    );
  }
  return [...new Set(known as EventName[])];
}

function nextMetricsPort(): number {
  const ports = readdirSync(join(ROOT, 'consumers'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, 'consumers', entry.name, 'consumer.ts')))
    .flatMap((entry) =>
      [
        ...readFileSync(join(ROOT, 'consumers', entry.name, 'consumer.ts'), 'utf8').matchAll(/metricsPort: '(\d+)'/g),
      ].map((m) => Number(m[1])),
    );
  return Math.max(FIRST_METRICS_PORT - 1, ...ports) + 1;
}

/** What a consumer may not be called: another program's or tool's name in Kubernetes, or a Kafka user of the access plan. */
function takenNames(): Set<string> {
  return new Set([
    ...programs().map((program) => program.name),
    ...tools().map((tool) => tool.name),
    KAFKA_ADMIN_USER,
    KAFKA_CONNECT_USER,
    KAFKA_REDRIVE_USER,
    KAFKA_CONNECTOR_COMMAND_USER,
  ]);
}

function wholeNumber(text: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new UsageError(
      `--${flag} ${text} is not a whole number from ${min} to ${max}; give one, e.g. --${flag} ${min}.`,
    );
  return value;
}

function planFrom(args: string[]): ConsumerPlan | 'help' {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      events: { type: 'string' },
      'when-late': { type: 'string' },
      'deadline-ms': { type: 'string' },
      'metrics-port': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return 'help';
  const [name, ...extra] = positionals;
  if (name === undefined || extra.length > 0)
    throw new UsageError(
      `give exactly one consumer name (got ${positionals.length}), e.g. npm run new-consumer -- seat-heatmap.`,
    );
  if (!NAME.test(name) || name.length > 40)
    throw new UsageError(
      `"${name}" is not a consumer name; use lower-case words joined by hyphens, at most 40 characters, e.g. seat-heatmap.`,
    );
  if (RESERVED.has(name))
    throw new UsageError(`"${name}" is a folder of the runtime under consumers/; choose another name.`);
  if (takenNames().has(name) && !existsSync(join(ROOT, 'consumers', name)))
    throw new UsageError(
      `"${name}" is the name of another program, tool or Kafka user of the project (its Deployment, Service or Kafka user would clash); choose another name.`,
    );
  const whenLate = values['when-late'] ?? 'keep-retrying';
  if (!WHEN_LATE.includes(whenLate as LatePolicy))
    throw new UsageError(`--when-late ${whenLate} is not a policy; use keep-retrying or dead-letter.`);
  return {
    name,
    schema: name.replaceAll('-', '_'),
    identifier: camelCase(name),
    events: eventNames(values.events),
    whenLate: whenLate as LatePolicy,
    deadlineMs: wholeNumber(values['deadline-ms'], 'deadline-ms', 1000, 7 * 24 * 3_600_000) ?? 300_000,
    metricsPort: wholeNumber(values['metrics-port'], 'metrics-port', 1024, 65_535) ?? nextMetricsPort(),
  };
}

/** The text as the project's Prettier settings format it (npm run lint checks them), or as it is for a file Prettier does not know. */
async function formatted(path: string, text: string): Promise<string> {
  const info = await getFileInfo(path);
  if (info.inferredParser === null) return text;
  return format(text, { ...(await resolveConfig(path)), filepath: path });
}

/** package.json with the consumer's script after the last consumer:… line, its formatting kept. */
function withScript(packageJson: string, plan: ConsumerPlan): string {
  const line = `    "consumer:${plan.name}": "node --enable-source-maps dist/consumers/${plan.name}/main.js",`;
  const lines = packageJson.split('\n');
  const last = lines.map((text) => /^\s*"consumer:[^"]+": /.test(text)).lastIndexOf(true);
  if (last < 0) throw new Error('package.json has no consumer:… script to add the new one after');
  return [...lines.slice(0, last + 1), line, ...lines.slice(last + 1)].join('\n');
}

const TEAM_CONSUMERS_FILE = join(ROOT, 'consumers', 'team-consumers.ts');
const MARKERS = { imports: '// new-consumer: imports', entries: '  // new-consumer: entries' };

/** consumers/team-consumers.ts with the consumer's import and entry added at the markers, so Kubernetes runs it too. */
function withTeamConsumer(text: string, plan: ConsumerPlan): string {
  const missing = Object.values(MARKERS).filter((marker) => !text.includes(`${marker}\n`));
  if (missing.length > 0)
    throw new UsageError(
      `consumers/team-consumers.ts has lost its marker line ${JSON.stringify(missing[0]?.trim())}; put it back (git diff shows where) and run new-consumer again.`,
    );
  return text
    .replace(
      `${MARKERS.imports}\n`,
      `${MARKERS.imports}\nimport { ${plan.identifier}Deployment } from './${plan.name}/consumer.js';\n`,
    )
    .replace(`${MARKERS.entries}\n`, `  ${plan.identifier}Deployment,\n${MARKERS.entries}\n`);
}

async function generate(plan: ConsumerPlan): Promise<string[]> {
  const folder = join(ROOT, 'consumers', plan.name);
  const files: [string, string][] = [
    [join(folder, 'consumer.ts'), consumerFile(plan)],
    [join(folder, 'main.ts'), mainFile(plan)],
    [join(folder, 'migrations', '000001_events_per_show.sql'), migrationFile(plan)],
    [join(ROOT, 'test', 'consumers', `${plan.name}.test.ts`), testFile(plan)],
  ];
  const packagePath = join(ROOT, 'package.json');
  const packageJson = readFileSync(packagePath, 'utf8');
  const scripts = (JSON.parse(packageJson) as { scripts: Record<string, string> }).scripts;
  const taken = [folder, ...files.map(([path]) => path)]
    .filter((path) => existsSync(path))
    .map((path) => relative(ROOT, path));
  if (`consumer:${plan.name}` in scripts) taken.push(`the script consumer:${plan.name}`);
  if (taken.length > 0)
    throw new UsageError(
      `consumer ${plan.name} exists already (${taken[0] ?? ''}); choose another name, or change the existing consumer.`,
    );
  const teamConsumers = withTeamConsumer(readFileSync(TEAM_CONSUMERS_FILE, 'utf8'), plan);
  const texts = await Promise.all(files.map(([path, text]) => formatted(path, text)));
  files.forEach(([path], i) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, texts[i] ?? '', { flag: 'wx' });
  });
  writeFileSync(packagePath, withScript(packageJson, plan));
  writeFileSync(TEAM_CONSUMERS_FILE, await formatted(TEAM_CONSUMERS_FILE, teamConsumers));
  renderKubernetesManifests();
  // Its npm script runs the compiled program: compiled now, so that it runs straight away.
  buildPrograms();
  return [
    ...files.map(([path]) => relative(ROOT, path)),
    'package.json',
    relative(ROOT, TEAM_CONSUMERS_FILE),
    'deploy/kubernetes/manifests/ (npm run k8s:render)',
  ];
}

/** npm run k8s:render, in a process of its own (it imports the consumer just written): its Deployment, Kafka user and policies. */
function renderKubernetesManifests(): void {
  const render = spawnSync(process.execPath, ['--import', 'tsx', 'deploy/kubernetes/render.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (render.status !== 0)
    throw new Error(
      `the consumer is written, but npm run k8s:render failed (exit ${render.status}); run it to see why:\n${render.stderr}`,
    );
}

async function main(args: string[]): Promise<number> {
  try {
    const plan = planFrom(args);
    if (plan === 'help') {
      console.log(USAGE);
      return 0;
    }
    const written = await generate(plan);
    console.log(
      `new-consumer: wrote ${plan.name}:\n${written.map((path) => `  ${path}`).join('\n')}\n\nNext:\n  npx vitest run test/consumers/${plan.name}.test.ts    its test (no stack needed)\n  npm run consumer:${plan.name} -- --help              its settings\nThen make countEvents and its table yours: docs/writing-a-consumer.md.`,
    );
    return 0;
  } catch (err) {
    if (
      !(err instanceof UsageError) &&
      !(err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))
    )
      throw err;
    console.error(`new-consumer: ${err.message}\n(npm run new-consumer -- --help for the options)`);
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
