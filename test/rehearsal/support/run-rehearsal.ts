/**
 * `npm run rehearsal` run the way a user runs it, under the machine-wide rehearsal lock, and what
 * it wrote: the exit code and output, the JSON record, the text and HTML reports. One helper for
 * every test that runs a whole rehearsal (small-rehearsal, rehearsal-drills, redundant-stack-drills).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RehearsalRecord } from '../../../rehearsal/record.js';
import { projectRoot } from '../../../stack/config.js';
import { REHEARSAL_LOCK_FILE } from '../../dashboards/rehearsal-run.js';

export interface RehearsalOutcome {
  code: number | null;
  /** The last lines of its output (stdout and stderr together), for failure messages. */
  tail: string;
  record: RehearsalRecord;
  text: string;
  html: string;
}

/** Runs a command to its end; its exit code and output (stdout and stderr together). */
function run(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: projectRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/**
 * `npm run rehearsal -- --show <show> [--drill <drills>]` with `env` added, waiting up to
 * `lockTimeoutS` for another rehearsal to end; throws (with the output's end) unless it exited 0
 * and wrote its three reports into `env.REHEARSAL_REPORT_DIR`.
 */
export async function runRehearsal(options: {
  show: string;
  drills?: string;
  env: Record<string, string> & { REHEARSAL_REPORT_DIR: string };
  lockTimeoutS: number;
  /** More to show when it fails (e.g. its programs' logs). */
  diagnostics?: () => string;
}): Promise<RehearsalOutcome> {
  const { show, env } = options;
  const drill = options.drills === undefined ? [] : ['--drill', options.drills];
  const { code, output } = await run(
    'flock',
    [
      '--timeout',
      String(options.lockTimeoutS),
      REHEARSAL_LOCK_FILE,
      'npm',
      'run',
      '-s',
      'rehearsal',
      '--',
      '--show',
      show,
      ...drill,
    ],
    env,
  );
  const tail = output.split('\n').slice(-60).join('\n');
  const file = (ext: string) => join(env.REHEARSAL_REPORT_DIR, `rehearsal-${show}.${ext}`);
  if (code !== 0 || !existsSync(file('json')))
    throw new Error(`npm run rehearsal exited ${code}; its output ends:\n${tail}\n${options.diagnostics?.() ?? ''}`);
  return {
    code,
    tail,
    record: JSON.parse(readFileSync(file('json'), 'utf8')) as RehearsalRecord,
    text: readFileSync(file('txt'), 'utf8'),
    html: readFileSync(file('html'), 'utf8'),
  };
}
