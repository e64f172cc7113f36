/**
 * One table of settings per program. The same table drives parsing (validated,
 * every problem reported as one sentence naming the variable and the fix),
 * `--help`, the documented `.env.example` and the tables in docs/configuration.md.
 *
 * Nothing here reads the environment until `parseSettings` is called.
 * An environment variable set to the empty string counts as unset.
 */
import type { SettingParser } from './setting-parsers.js';
import { redactUserInfo, withoutUserInfo } from './redact.js';

export * from './setting-parsers.js';

export interface Setting<T> {
  /** Environment variable, e.g. SLOT_MONITOR_POLL_INTERVAL_MS. */
  env: string;
  /** Text parsed like a value from the environment; undefined means the setting is required. */
  default: string | undefined;
  parser: SettingParser<T>;
  /** One sentence: what it is for. */
  description: string;
  /**
   * Never echoed in errors, help, logs or examples. A secret has no default (or the empty
   * default meaning "none", e.g. no SMTP password): a password that works out of the box
   * works for an attacker too, so whoever runs the program passes it explicitly.
   */
  secret?: boolean;
}

export type SettingsTable = Record<string, Setting<unknown>>;

export interface SettingsDefinition<T extends SettingsTable> {
  program: string;
  settings: T;
}

/** The parsed configuration: every key present, no optional fields. */
export type Config<T extends SettingsTable> = {
  readonly [K in keyof T]: T[K] extends Setting<infer V> ? V : never;
};

/** Bad or missing configuration. `problems` holds one sentence per setting. */
export class ConfigError extends Error {
  readonly program: string;
  readonly problems: readonly string[];

  constructor(program: string, problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
    this.program = program;
    this.problems = problems;
  }
}

const ENV_NAME = /^[A-Z][A-Z0-9_]*$/;

function checkTable(program: string, settings: SettingsTable): void {
  const seen = new Set<string>();
  for (const [key, setting] of Object.entries(settings)) {
    const where = `settings table of ${program}, ${key}`;
    if (!ENV_NAME.test(setting.env)) throw new Error(`${where}: env "${setting.env}" is not an UPPER_SNAKE_CASE name.`);
    if (seen.has(setting.env)) throw new Error(`${where}: env ${setting.env} is used twice.`);
    seen.add(setting.env);
    if (setting.default !== undefined && !setting.parser.schema.safeParse(setting.default).success) {
      throw new Error(`${where}: default "${setting.default}" is not ${setting.parser.expected}.`);
    }
    if (setting.secret && setting.default !== undefined && setting.default !== '') {
      throw new Error(
        `${where}: ${setting.env} is a secret and must not have a default; make it required (default: undefined).`,
      );
    }
  }
}

/** Declares a program's settings. Checks the table itself (names, duplicates, defaults), not the environment. */
export function defineSettings<const T extends SettingsTable>(program: string, settings: T): SettingsDefinition<T> {
  checkTable(program, settings);
  return { program, settings };
}

function fixHint(setting: Setting<unknown>): string {
  const example = `set it to e.g. ${setting.parser.example}`;
  if (setting.default === undefined) return example;
  return `${example} or unset it to use the default ${setting.default === '' ? '(empty)' : setting.default}`;
}

function invalidSentence(setting: Setting<unknown>, raw: string): string {
  const shown = setting.secret
    ? `${setting.env} (secret, value not shown)`
    : `${setting.env}=${JSON.stringify(withoutUserInfo(raw))}`;
  return `${shown} is not valid: expected ${setting.parser.expected}; ${fixHint(setting)}.`;
}

function missingSentence(setting: Setting<unknown>): string {
  return `${setting.env} is required but not set: expected ${setting.parser.expected} (${setting.description.replace(/\.$/, '')}); ${fixHint(setting)}.`;
}

/**
 * Reads every setting of `def` from `env`, falling back to defaults. Throws one
 * ConfigError listing every bad or missing variable (one sentence each).
 */
export function parseSettings<T extends SettingsTable>(
  def: SettingsDefinition<T>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Config<T> {
  const config: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, setting] of Object.entries(def.settings)) {
    const fromEnv = env[setting.env];
    const raw = fromEnv === undefined || fromEnv === '' ? setting.default : fromEnv;
    if (raw === undefined) {
      problems.push(missingSentence(setting));
      continue;
    }
    const parsed = setting.parser.schema.safeParse(raw);
    if (parsed.success) config[key] = parsed.data;
    else problems.push(invalidSentence(setting, raw));
  }
  if (problems.length > 0) throw new ConfigError(def.program, problems);
  return config as Config<T>;
}

/** The configuration as a plain object safe to log: secrets replaced by "[secret]", passwords taken out of URLs. */
export function configForLog<T extends SettingsTable>(
  def: SettingsDefinition<T>,
  config: Config<T>,
): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(def.settings)) {
    shown[key] = setting.secret ? '[secret]' : redactUserInfo((config as Record<string, unknown>)[key]);
  }
  return shown;
}

function defaultWords(setting: Setting<unknown>): string {
  if (setting.default === undefined) return 'required';
  return `default ${setting.default === '' ? '(empty)' : setting.default}`;
}

function withPeriod(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** Text for `--help`: every variable with its default, what it is for and what it expects. */
export function settingsHelp<T extends SettingsTable>(def: SettingsDefinition<T>): string {
  const settings = Object.values(def.settings);
  const width = Math.max(...settings.map((s) => s.env.length));
  const lines = [`${def.program} reads these environment variables (an empty value counts as unset):`, ''];
  for (const setting of settings) {
    const flags = [defaultWords(setting), ...(setting.secret ? ['secret'] : [])];
    lines.push(`  ${setting.env.padEnd(width)}  ${flags.join(', ')}`);
    lines.push(`      ${withPeriod(setting.description)} Expected: ${setting.parser.expected}.`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A documented `.env.example`: settings with a default appear commented out with
 * that default; required ones appear uncommented and empty, to be filled in.
 */
export function envExample<T extends SettingsTable>(def: SettingsDefinition<T>): string {
  const blocks = [`# Settings of ${def.program}. An empty value counts as unset.`];
  for (const setting of Object.values(def.settings)) {
    const notes = [`Expected: ${setting.parser.expected}, e.g. ${setting.parser.example}.`];
    if (setting.default === undefined) notes.push('Required.');
    if (setting.secret) notes.push('Secret: keep the real value out of git.');
    const line =
      setting.default === undefined || setting.secret ? `${setting.env}=` : `# ${setting.env}=${setting.default}`;
    blocks.push([`# ${withPeriod(setting.description)}`, `# ${notes.join(' ')}`, line].join('\n'));
  }
  return `${blocks.join('\n\n')}\n`;
}

function markdownCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** A Markdown table (docs/configuration.md): setting | env var | default | description. */
export function settingsMarkdownTable<T extends SettingsTable>(def: SettingsDefinition<T>): string {
  const rows = ['| setting | env var | default | description |', '| --- | --- | --- | --- |'];
  for (const [key, setting] of Object.entries(def.settings)) {
    let shownDefault = setting.default === '' ? '*(empty)*' : `\`${setting.default}\``;
    if (setting.default === undefined) shownDefault = '*required*';
    const description = `${withPeriod(setting.description)} Expected: ${setting.parser.expected}.`;
    rows.push(`| ${key} | \`${setting.env}\` | ${markdownCell(shownDefault)} | ${markdownCell(description)} |`);
  }
  return `${rows.join('\n')}\n`;
}
