import { existsSync, readdirSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_DOC, PROGRAM_SETTINGS, renderSettingsBlocks } from '../../scripts/readme-settings.js';
import { projectRoot } from '../../stack/config.js';

const README = join(projectRoot, 'README.md');

/** Folders that hold no project documentation: dependencies, the stack's data, git itself. */
const SKIPPED_FOLDERS = new Set(['node_modules', '.stack', '.git']);

/** Every Markdown file of the project, relative to its root. */
function markdownFiles(dir = projectRoot): string[] {
  return readableEntries(dir).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : markdownFiles(join(dir, entry.name));
    return entry.isFile() && entry.name.endsWith('.md') ? [relative(projectRoot, join(dir, entry.name))] : [];
  });
}

/** A folder's entries; none for a folder this user may not read (a second stack's Postgres data, say). */
function readableEntries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EACCES') return [];
    throw err;
  }
}

/** The Markdown without fenced code blocks and inline code: neither holds links or headings. */
function proseOf(markdown: string): string {
  return markdown.replace(/^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '').replace(/`+[^`\n]*`+/g, 'code');
}

/** GitHub's slug of a heading: its text in lower case, punctuation dropped, each space a hyphen. */
function headingSlug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link counts with its text
    .replace(/[`*]/g, '') // code and emphasis marks are not part of the text
    .replace(/<[^>]+>/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a Markdown file offers: one per heading (repeats get -1, -2, …), plus HTML ids. */
function anchorsOf(markdown: string): Set<string> {
  const withoutFences = markdown.replace(/^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '');
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of withoutFences.matchAll(/^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = headingSlug(match[1] ?? '');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const match of withoutFences.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1] ?? '');
  return anchors;
}

/** Link targets in the Markdown's prose: inline links and images, reference definitions, HTML hrefs. */
function linkTargets(markdown: string): string[] {
  const prose = proseOf(markdown);
  return [
    ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? ''),
    ...[...prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1] ?? ''),
    ...[...prose.matchAll(/<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"/g)].map((m) => m[1] ?? ''),
  ];
}

/**
 * What is wrong with the links of `file` (relative to `root`, with content `markdown`): a target
 * that is not a file or folder of the project, an anchor that is no heading of its file, or a
 * link that leaves the repository (the docs stand alone). Empty when every link resolves.
 */
function linkProblems(root: string, file: string, markdown: string): string[] {
  const problems: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) {
      problems.push(`${file}: ${target} points outside the repository; the docs must stand alone`);
      continue;
    }
    const [pathPart = '', anchor] = target.split('#', 2);
    const path = decodeURIComponent(pathPart);
    if (path === '') {
      if (!anchorsOf(markdown).has(decodeURIComponent(anchor ?? '')))
        problems.push(`${file}: ${target}: ${file} has no heading with the anchor #${anchor ?? ''}`);
      continue;
    }
    const absolute = path.startsWith('/') ? join(root, path) : resolve(root, dirname(file), path);
    if (absolute !== root && !absolute.startsWith(root + sep)) {
      problems.push(`${file}: ${target} leaves the repository`);
      continue;
    }
    if (!existsSync(absolute)) {
      problems.push(`${file}: ${target} names ${relative(root, absolute)}, which does not exist`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (statSync(absolute).isDirectory() || !absolute.endsWith('.md')) {
      problems.push(`${file}: ${target} has an anchor, but ${relative(root, absolute)} is not a Markdown file`);
      continue;
    }
    if (!anchorsOf(readFileSync(absolute, 'utf8')).has(decodeURIComponent(anchor))) {
      problems.push(`${file}: ${target}: ${relative(root, absolute)} has no heading with the anchor #${anchor}`);
    }
  }
  return problems;
}

describe('Markdown links', () => {
  const files = markdownFiles();

  it('finds the README and the docs', () => {
    expect(files).toContain('README.md');
    expect(files).toContain(join('docs', 'operations.md'));
    expect(files).toContain(join('docs', 'configuration.md'));
  });

  it('every relative link of every Markdown file resolves to a file, and every #anchor to a heading of it', () => {
    const problems = files.flatMap((file) =>
      linkProblems(projectRoot, file, readFileSync(join(projectRoot, file), 'utf8')),
    );
    expect(problems).toEqual([]);
  });

  it('the check finds a missing file, a missing anchor and a link outside the repository, and ignores code', () => {
    const markdown = [
      '# A page',
      '## Twice',
      '## Twice',
      'Fine: [runbook](operations.md#slotlost), [readme](../README.md), [here](#a-page), [again](#twice-1), [folder](../monitors/prometheus/).',
      'Broken: [gone](no-such-file.md), [anchor](operations.md#no-such-alert), [here](#nowhere), [out](https://example.com/x), [up](../../elsewhere.md).',
      '`[in code](missing-in-code.md)`',
      '```md',
      '[in a fence](missing-in-fence.md)',
      '```',
    ].join('\n');
    expect(linkProblems(projectRoot, join('docs', 'page.md'), markdown)).toEqual([
      `${join('docs', 'page.md')}: no-such-file.md names ${join('docs', 'no-such-file.md')}, which does not exist`,
      `${join('docs', 'page.md')}: operations.md#no-such-alert: ${join('docs', 'operations.md')} has no heading with the anchor #no-such-alert`,
      `${join('docs', 'page.md')}: #nowhere: ${join('docs', 'page.md')} has no heading with the anchor #nowhere`,
      `${join('docs', 'page.md')}: https://example.com/x points outside the repository; the docs must stand alone`,
      `${join('docs', 'page.md')}: ../../elsewhere.md leaves the repository`,
    ]);
  });

  it('makes anchors as GitHub does', () => {
    expect([
      ...anchorsOf(
        '# Stagefront CDC\n## Settings\n### Settings\n#### Watchdog (service="job-watchdog")\n## Reconciliation: published vs handled per consumer\n## `npm run x` and [a link](y.md)\n```sh\n# a comment\n```\n',
      ),
    ]).toEqual([
      'stagefront-cdc',
      'settings',
      'settings-1',
      'watchdog-servicejob-watchdog',
      'reconciliation-published-vs-handled-per-consumer',
      'npm-run-x-and-a-link',
    ]);
  });
});

describe('generated settings tables', () => {
  const configuration = readFileSync(CONFIGURATION_DOC, 'utf8');

  it('docs/configuration.md has a settings table for every program, equal to its table in code (npm run docs:settings rewrites them)', () => {
    for (const name of Object.keys(PROGRAM_SETTINGS))
      expect(configuration, `settings:${name} block`).toContain(`<!-- settings:${name} -->`);
    expect(
      renderSettingsBlocks(configuration) === configuration,
      'docs/configuration.md settings tables are stale: run npm run docs:settings',
    ).toBe(true);
  });
});

describe('README', () => {
  const readme = readFileSync(README, 'utf8');

  it('starts with the two command lines: the rehearsal and the tests', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(firstBlock).toContain('npm run -s rehearsal');
    expect(firstBlock).toContain('npm run -s test:all');
    expect(readFileSync(join(projectRoot, '.ci', 'run'), 'utf8')).toContain(
      'npm ci --no-audit --no-fund && npm run -s test:all',
    );
  });

  it('stays a front door of a few hundred lines; reference material lives in docs/', () => {
    expect(readme.split('\n').length, 'README.md grew past 400 lines: move the detail into docs/').toBeLessThan(400);
  });

  it('the Markdown files name only npm scripts that exist', () => {
    const scripts = Object.keys(
      (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
        .scripts,
    );
    const named = markdownFiles().flatMap((file) =>
      [...readFileSync(join(projectRoot, file), 'utf8').matchAll(/npm run (?:-s )?([a-z][a-z0-9:-]*)/g)].map(
        (m) => `${file}: npm run ${m[1] ?? ''}`,
      ),
    );
    expect(named.filter((line) => !scripts.includes(line.replace(/^.*: npm run /, '')))).toEqual([]);
  });
});
