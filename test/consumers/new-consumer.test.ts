/**
 * `npm run new-consumer`: in a scratch copy of the project (its node_modules linked, the stack
 * shared), a generated consumer type-checks, lints and passes its own generated test on the first
 * run; the same test fails once the consumer is broken; bad requests are refused with the fix.
 * Started beside the stack against real Kafka, it applies a re-emitted older copy (the contract's
 * late copy) once, and it is scraped by the stack's Prometheus under the consumers' job and
 * watched by ConsumerDown, with no file edited by hand (a kill -9 shows as down, a stop as gone).
 * The scratch copy is removed whatever happens, so nothing generated reaches this checkout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { localStackProgramEnv, projectRoot, stackLayout } from '../../stack/config.js';
import { SCRAPE_TARGETS_SWITCH, scrapeTargetsDir } from '../../stack/scrape-targets.js';
import { freePort } from '../slot-monitor/support/alertmanager-process.js';
import { createSchemaRegistry } from '../../lib/schema-registry.js';
import { produceCloudEvents } from '../support/cloudevent-records.js';
import { adminQuery, createTestDatabase, requireStack, uniqueName } from '../support/stack.js';
import { catalogueEvent, catalogueSchemaIds } from './helpers/catalogue-events.js';
import { connectedProducer, createTopics, testKafka } from './helpers/stack-fixture.js';

const stack = requireStack();

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
  'deploy',
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
    for (const clash of ['slot-monitor', 'connect', 'connector-command']) {
      const taken = await newConsumer(clash);
      expect(taken.code, clash).toBe(2);
      expect(taken.output).toContain(`"${clash}" is the name of another program, tool or Kafka user of the project`);
    }
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
      expect(packageJson.scripts[`consumer:${NAME}`]).toBe(`node --enable-source-maps dist/consumers/${NAME}/main.js`);
      // That script runs straight away: the scaffold compiled the new program.
      const help = await run(scratch, ['--enable-source-maps', `dist/consumers/${NAME}/main.js`, '--help']);
      expect(help.output).toContain('CONSUMER_DATABASE_URL');
      expect(help.code).toBe(0);
      const again = await newConsumer(NAME);
      expect(again.output).toContain(`consumer ${NAME} exists already`);

      // Kubernetes runs it: listed for deploy/kubernetes/programs.ts, its Deployment rendered, the manifests in sync.
      expect(await readFile(join(scratch, 'consumers/team-consumers.ts'), 'utf8')).toContain(
        `import { seatPulseDeployment } from './${NAME}/consumer.js';`,
      );
      const deployment = await readFile(join(scratch, `deploy/kubernetes/manifests/40-${NAME}.yaml`), 'utf8');
      expect(deployment).toContain(`kind: Deployment\nmetadata:\n  name: ${NAME}\n`);
      expect(await readFile(join(scratch, 'deploy/kubernetes/manifests/15-users.yaml'), 'utf8')).toContain(
        `name: ${NAME}\n`,
      );
      expect(await run(scratch, ['--import', 'tsx', 'deploy/kubernetes/render.ts', '--check'])).toEqual({
        code: 0,
        output: '',
      });

      const files = [`consumers/${NAME}`, `test/consumers/${NAME}.test.ts`, 'consumers/team-consumers.ts'];
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
      // Only the assertions fail: no second, misleading failure about something the test left running.
      expect(brokenRun.output).not.toContain('left running');
      expect(brokenRun.code).not.toBe(0);
    },
  );

  it(
    "started beside the stack, a generated consumer applies a re-emitted older copy once, and is scraped by the stack's Prometheus under the consumers job and watched by ConsumerDown",
    { timeout: 300_000 },
    async () => {
      const name = 'seat-pulse-watched';
      expect((await newConsumer(name, '--events', 'seatSold')).code).toBe(0);
      const layout = stackLayout();
      const prefix = uniqueName('scraped');
      await createTopics(testKafka(stack, prefix), [`${prefix}.seat`], 1);
      const database = await createTestDatabase('scraped');
      const port = await freePort();
      const instance = `127.0.0.1:${port}`;
      const targetFiles = () => readdirSync(join(scrapeTargetsDir(layout.home), 'consumers'));
      const start = (): ChildProcess =>
        spawn(process.execPath, ['--import', 'tsx', `consumers/${name}/main.ts`], {
          cwd: scratch,
          env: {
            ...process.env,
            ...localStackProgramEnv(layout),
            STACK_HOME: layout.home,
            [SCRAPE_TARGETS_SWITCH]: 'yes', // the suite switches the announcement off for its own programs
            CONSUMER_DATABASE_URL: database.url,
            TOPIC_PREFIX: prefix,
            METRICS_PORT: String(port),
            LOG_LEVEL: 'warn',
          },
          stdio: 'ignore',
        });
      /** The stack's Prometheus, asked over its HTTP API (not the program): this instance's target in job consumers. */
      const target = async () => {
        const response = await fetch(`${stack.prometheusUrl}/api/v1/targets?state=active`);
        const body = (await response.json()) as {
          data: { activeTargets: { labels: Record<string, string>; health: string }[] };
        };
        return body.data.activeTargets.find((t) => t.labels.job === 'consumers' && t.labels.instance === instance);
      };
      const consumerDown = async () => {
        const response = await fetch(`${stack.prometheusUrl}/api/v1/alerts`);
        const body = (await response.json()) as {
          data: { alerts: { labels: Record<string, string>; state: string }[] };
        };
        return body.data.alerts.find((a) => a.labels.alertname === 'ConsumerDown' && a.labels.instance === instance);
      };
      const wait = <T>(check: () => Promise<T | undefined | false>, description: string) =>
        waitFor(check, { timeoutMs: 120_000, intervalMs: 1000, description });

      let child = start();
      try {
        await wait(async () => (await target())?.health === 'up', `${instance} scraped and up in job consumers`);
        expect(targetFiles().filter((file) => file.startsWith(`${name}-`))).toEqual([
          expect.stringMatching(new RegExp(`^${name}-${child.pid}-\\d+\\.json$`)),
        ]);

        // The contract's late copy through real Kafka: a sale, a newer sale, then the first one re-emitted
        // as a recovery does (the same ce_id and time, after newer events), then a marker of another show.
        const registry = createSchemaRegistry(stack.registryUrl);
        const ids = await catalogueSchemaIds(registry);
        const sale = (show: string, seat: string, at: number) =>
          catalogueEvent(ids, 'seatSold', {
            seat_id: `${show}:A-1-${seat}`,
            show_id: show,
            section: 'A',
            row: '1',
            seat_number: Number(seat),
            order_id: randomUUID(),
            price_cents: 4500,
            sold_at: at,
          });
        const first = { ...sale('late-show', '1', Date.now() - 60_000), id: randomUUID() };
        const { producer, close: closeProducer } = await connectedProducer(testKafka(stack, prefix));
        try {
          await produceCloudEvents(producer, registry, `${prefix}.seat`, [first, sale('late-show', '2', Date.now())]);
          await produceCloudEvents(producer, registry, `${prefix}.seat`, [first, sale('marker-show', '1', Date.now())]);
        } finally {
          await closeProducer();
        }
        const counted = async () =>
          (
            await adminQuery(
              database.url,
              `select show_id, events::int from ${name.replaceAll('-', '_')}.events_per_show order by show_id`,
            ).catch(() => ({ rows: [] }))
          ).rows;
        await wait(async () => (await counted()).some((row) => row.show_id === 'marker-show'), 'the marker counted');
        expect(await counted()).toEqual([
          { show_id: 'late-show', events: 2 },
          { show_id: 'marker-show', events: 1 },
        ]);

        // Killed with -9 it cannot withdraw: its target reads down and ConsumerDown takes it up (pending for its `for`).
        child.kill('SIGKILL');
        await once(child, 'exit');
        await wait(async () => (await target())?.health === 'down', `${instance} down after kill -9`);
        await wait(consumerDown, `ConsumerDown pending or firing for ${instance}`);

        // Started again it replaces the dead process's file; stopped, it withdraws and the target is gone.
        child = start();
        await wait(async () => (await target())?.health === 'up', `${instance} up again after the restart`);
        expect(targetFiles().filter((file) => file.startsWith(`${name}-`))).toEqual([
          expect.stringMatching(new RegExp(`^${name}-${child.pid}-\\d+\\.json$`)),
        ]);
        child.kill('SIGTERM');
        await once(child, 'exit');
        expect(targetFiles().filter((file) => file.startsWith(`${name}-`))).toEqual([]);
        await wait(async () => (await target()) === undefined, `${instance} no longer a target after a stop`);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        // A failure after the kill -9 must not leave a down target (ConsumerDown) for the tests after it.
        for (const file of targetFiles().filter((f) => f.startsWith(`${name}-`)))
          rmSync(join(scrapeTargetsDir(layout.home), 'consumers', file), { force: true });
        await database.drop();
      }
    },
  );
});
