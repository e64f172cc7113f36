/**
 * `npm run new-consumer`: in a scratch copy of the project (its node_modules linked, the stack
 * shared), a generated consumer type-checks, lints and passes its own generated test on the first
 * run; the same test fails once the consumer is broken; bad requests are refused with the fix.
 * The scratch copy is removed whatever happens, so nothing generated reaches this checkout.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot, stackLayout } from '../../stack/config.js';
import { requireStack } from '../support/stack.js';

requireStack();

/** What a consumer's code, its test and the scaffold reach (not the stack's downloads, other builds or docs). */
const COPIED = [
  'package.json',
  'tsconfig.json',
  'eslint.config.js',
  '.prettierrc.json',
  '.prettierignore',
  'vitest.config.ts',
  'consumers',
  'events',
  'lib',
  'stack',
  'connectors',
  'monitors',
  'seat-service',
  'scripts',
  'test',
];
const NAME = 'seat-pulse';

interface Run {
  code: number | null;
  output: string;
}

async function run(cwd: string, command: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, command, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}

describe('npm run new-consumer', () => {
  let scratch = '';
  const newConsumer = (...args: string[]) => run(scratch, ['--import', 'tsx', 'scripts/new-consumer.ts', ...args]);
  // The scratch copy's tests use this checkout's stack (its STACK_HOME, not the copy's).
  const generatedTest = () =>
    run(scratch, ['node_modules/vitest/vitest.mjs', 'run', `test/consumers/${NAME}.test.ts`], {
      STACK_HOME: stackLayout().home,
      CI: process.env.CI ?? '',
    });

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'new-consumer-'));
    for (const entry of COPIED) await cp(join(projectRoot, entry), join(scratch, entry), { recursive: true });
    await symlink(join(projectRoot, 'node_modules'), join(scratch, 'node_modules'), 'dir');
  });
  afterAll(async () => {
    if (scratch !== '') await rm(scratch, { recursive: true, force: true });
  });

  it('refuses a bad name, an unknown event type and an existing consumer, naming the fix', async () => {
    const badName = await newConsumer('Seat_Pulse');
    expect(badName.code).toBe(2);
    expect(badName.output).toContain('use lower-case words joined by hyphens');
    const unknown = await newConsumer('seat-x', '--events', 'seatHeld,seatTeleported');
    expect(unknown.code).toBe(2);
    expect(unknown.output).toContain(
      'unknown event type seatTeleported; use catalogue names from events/catalogue.ts: seatHeld,',
    );
    const existing = await newConsumer('sales-ledger');
    expect(existing.code).toBe(2);
    expect(existing.output).toContain('consumer sales-ledger exists already');
    const help = await newConsumer('--help');
    expect(help.code).toBe(0);
    expect(help.output).toContain('Usage: npm run new-consumer -- <name> [options]');
  });

  it(
    'generates a consumer that type-checks, lints and passes its own test on the first run, and whose test fails when it is broken',
    { timeout: 300_000 },
    async () => {
      const generated = await newConsumer(NAME, '--events', 'seatHeld,seatSold,com.stagefront.order.confirmed');
      expect(generated.output).toContain(`wrote ${NAME}`);
      expect(generated.code).toBe(0);
      const packageJson = JSON.parse(await readFile(join(scratch, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      };
      expect(packageJson.scripts[`consumer:${NAME}`]).toBe(`node --import tsx consumers/${NAME}/main.ts`);
      const again = await newConsumer(NAME);
      expect(again.output).toContain(`consumer ${NAME} exists already`);

      const files = [`consumers/${NAME}`, `test/consumers/${NAME}.test.ts`];
      await writeFile(
        join(scratch, 'tsconfig.generated.json'),
        JSON.stringify({ extends: './tsconfig.json', include: files }),
      );
      const [firstRun, typeCheck, lint, style] = await Promise.all([
        generatedTest(),
        run(scratch, ['node_modules/typescript/bin/tsc', '--noEmit', '-p', 'tsconfig.generated.json']),
        run(scratch, ['node_modules/eslint/bin/eslint.js', ...files]),
        run(scratch, ['node_modules/prettier/bin/prettier.cjs', '--check', ...files]),
      ]);
      expect(typeCheck).toEqual({ code: 0, output: '' });
      expect(lint).toEqual({ code: 0, output: '' });
      expect(style.output).toContain('All matched files use Prettier code style');
      expect(style.code).toBe(0);
      expect(firstRun.output).toContain('3 passed');
      expect(firstRun.code).toBe(0);

      const consumerPath = join(scratch, 'consumers', NAME, 'consumer.ts');
      const source = await readFile(consumerPath, 'utf8');
      expect(source).toContain('row.events += 1;');
      await writeFile(consumerPath, source.replace('row.events += 1;', 'row.events += 2;'));
      const brokenRun = await generatedTest();
      expect(brokenRun.output).toContain('counts each event once per show and type');
      expect(brokenRun.output).toContain('a late copy, older than events of its key already applied');
      expect(brokenRun.output).toContain('2 failed');
      expect(brokenRun.code).not.toBe(0);
    },
  );
});
