/**
 * Headless Chromium for tests that open a page: the DevTools protocol over a pipe
 * (--remote-debugging-pipe: JSON messages on file descriptors 3 and 4, each ended by a NUL byte),
 * so no WebSocket client is needed. Collects every console error, uncaught exception, log entry
 * of level error and network request while the page is open.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Readable, Writable } from 'node:stream';

const CANDIDATES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

/** The browser binary: CHROMIUM_PATH, or the first of the usual names on the PATH. */
export function chromiumCommand(): string | undefined {
  const candidates = process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : CANDIDATES;
  return candidates.find((command) => spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0);
}

export const CHROMIUM_HINT =
  "install Debian's chromium package (as root: apt-get update && apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium or Chrome binary";

export interface OpenPage {
  /** Console errors, uncaught exceptions and error log entries, as text. */
  errors: string[];
  /** URLs the page asked for besides itself. */
  requests: string[];
  /** Evaluates an expression in the page and returns its value (JSON-serialisable). */
  evaluate<T>(expression: string): Promise<T>;
  /** A PNG of the whole page at the viewport's width, or of the first element `selector` finds. */
  screenshot(file: string, selector?: string): Promise<void>;
  close(): Promise<void>;
}

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
}

const STEP_TIMEOUT_MS = 30_000;

/** Opens a local HTML file in a fresh headless Chromium; waits for its load event. */
export async function openPage(file: string, viewport: { width: number; height: number }): Promise<OpenPage> {
  const command = chromiumCommand();
  if (command === undefined) throw new Error(`Chromium not found: ${CHROMIUM_HINT}`);
  const profile = mkdtempSync(join(tmpdir(), 'stagefront-chromium-'));
  const child = spawn(
    command,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-extensions',
      '--disable-dev-shm-usage',
      '--hide-scrollbars',
      '--mute-audio',
      `--user-data-dir=${profile}`,
      `--window-size=${viewport.width},${viewport.height}`,
      '--remote-debugging-pipe',
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const protocol = devtools(child, () => stderr);
  const close = async () => {
    await protocol.send('Browser.close').catch(() => undefined);
    await exited(child, 5000);
    rmSync(profile, { recursive: true, force: true });
  };
  try {
    const { targetId } = await protocol.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await protocol.send('Target.attachToTarget', { targetId, flatten: true });
    const session = String(sessionId);
    const errors: string[] = [];
    const requests: string[] = [];
    const pageUrl = pathToFileURL(file).href;
    protocol.listen(session, (method, params) => {
      if (method === 'Runtime.exceptionThrown') errors.push(exceptionText(params));
      if (method === 'Runtime.consoleAPICalled' && (params.type === 'error' || params.type === 'assert'))
        errors.push(`console.${String(params.type)}: ${consoleText(params)}`);
      if (method === 'Log.entryAdded') {
        const entry = params.entry as { level: string; text: string; url?: string };
        if (entry.level === 'error') errors.push(`${entry.text}${entry.url ? ` (${entry.url})` : ''}`);
      }
      if (method === 'Network.requestWillBeSent') {
        const url = String((params.request as { url: string }).url);
        if (url !== pageUrl && url !== 'about:blank') requests.push(url);
      }
    });
    for (const method of ['Page.enable', 'Runtime.enable', 'Log.enable', 'Network.enable'])
      await protocol.send(method, {}, session);
    await protocol.send(
      'Emulation.setDeviceMetricsOverride',
      { width: viewport.width, height: viewport.height, deviceScaleFactor: 1, mobile: false },
      session,
    );
    const loaded = protocol.waitFor(session, 'Page.loadEventFired');
    const navigation = await protocol.send('Page.navigate', { url: pageUrl }, session);
    if (navigation.errorText) throw new Error(`Chromium could not open ${file}: ${String(navigation.errorText)}`);
    await loaded;
    const evaluate = async <T>(expression: string): Promise<T> => {
      const reply = await protocol.send(
        'Runtime.evaluate',
        { expression, returnByValue: true, awaitPromise: true },
        session,
      );
      if (reply.exceptionDetails) throw new Error(`evaluating in the page failed: ${exceptionText(reply)}`);
      return (reply.result as { value: T }).value;
    };
    return {
      errors,
      requests,
      evaluate,
      async screenshot(path: string, selector?: string) {
        const metrics = await protocol.send('Page.getLayoutMetrics', {}, session);
        const size = metrics.cssContentSize as { width: number; height: number };
        const box =
          selector === undefined
            ? undefined
            : await evaluate<{ x: number; y: number; width: number; height: number }>(
                `(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect(); return { x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height }; })()`,
              );
        const clip = { ...(box ?? { x: 0, y: 0, width: viewport.width, height: Math.ceil(size.height) }), scale: 1 };
        const shot = await protocol.send(
          'Page.captureScreenshot',
          { format: 'png', clip, captureBeyondViewport: true },
          session,
        );
        writeFileSync(path, Buffer.from(String(shot.data), 'base64'));
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

function exceptionText(params: Record<string, unknown>): string {
  const details = params.exceptionDetails as
    { text?: string; exception?: { description?: string }; url?: string; lineNumber?: number } | undefined;
  return `uncaught: ${details?.exception?.description ?? details?.text ?? 'exception'}${details?.url ? ` (${details.url}:${details.lineNumber ?? '?'})` : ''}`;
}

function consoleText(params: Record<string, unknown>): string {
  const args = (params.args as { value?: unknown; description?: string }[] | undefined) ?? [];
  return args.map((a) => (a.value !== undefined ? String(a.value) : (a.description ?? ''))).join(' ');
}

async function exited(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await done;
  clearTimeout(timer);
}

type Listener = (method: string, params: Record<string, unknown>) => void;

/** Requests and replies, matched by id; events handed to the listener of their session. */
function devtools(child: ChildProcess, stderr: () => string) {
  const input = child.stdio[3] as Writable;
  const output = child.stdio[4] as Readable;
  let nextId = 1;
  let buffer = '';
  const pending = new Map<
    number,
    { resolve: (result: Record<string, unknown>) => void; reject: (err: Error) => void }
  >();
  const listeners = new Map<string, Listener[]>();
  const failAll = (err: Error) => {
    for (const { reject } of pending.values()) reject(err);
    pending.clear();
  };
  output.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let end: number;
    while ((end = buffer.indexOf('\0')) >= 0) {
      const message = JSON.parse(buffer.slice(0, end)) as Message;
      buffer = buffer.slice(end + 1);
      if (message.id !== undefined) {
        const waiter = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) waiter?.reject(new Error(`DevTools: ${message.error.message}`));
        else waiter?.resolve(message.result ?? {});
      } else if (message.method) {
        for (const listener of listeners.get(message.sessionId ?? '') ?? [])
          listener(message.method, message.params ?? {});
      }
    }
  });
  child.on('exit', (code, signal) =>
    failAll(
      new Error(
        `Chromium exited (${code ?? signal}) before answering: ${stderr().trim().split('\n').slice(-5).join(' | ')}`,
      ),
    ),
  );
  child.on('error', (err) => failAll(err));
  const listen = (sessionId: string, listener: Listener) => {
    listeners.set(sessionId, [...(listeners.get(sessionId) ?? []), listener]);
  };
  return {
    listen,
    send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`DevTools: no answer to ${method} in ${STEP_TIMEOUT_MS} ms`));
        }, STEP_TIMEOUT_MS);
        const settle =
          <A>(f: (a: A) => void) =>
          (a: A) => {
            clearTimeout(timer);
            f(a);
          };
        pending.set(id, { resolve: settle(resolve), reject: settle(reject) });
        input.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
      });
    },
    waitFor(sessionId: string, event: string): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`the page did not fire ${event} in ${STEP_TIMEOUT_MS} ms`)),
          STEP_TIMEOUT_MS,
        );
        listen(sessionId, (method) => {
          if (method === event) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
    },
  };
}
