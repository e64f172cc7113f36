/**
 * What the rehearsal shows while the crowd runs: seats, events published and handled per consumer,
 * lag, the slot's retained WAL and the alerts firing. On a terminal a small block redrawn in place;
 * otherwise (a pipe, a CI log) one plain line every few seconds, so a log stays readable.
 */
import type { Sample } from './record.js';

export interface LiveView {
  update(sample: Sample): void;
  /** Draws the last sample once more and leaves it on screen (a terminal) or in the log (plain). */
  close(): void;
}

/** A terminal redraw at most this often: samples come about once a second, bursts are dropped. */
const REDRAW_MS = 250;
/** Plain output: one line per this much sample time. */
const PLAIN_LINE_MS = 5000;
/** Events per second are measured over the samples of this last stretch. */
const RATE_WINDOW_MS = 5000;

export function createLiveView(out: NodeJS.WriteStream): LiveView {
  return out.isTTY ? terminalView(out) : plainView(out);
}

function terminalView(out: NodeJS.WriteStream): LiveView {
  const color = typeof out.hasColors === 'function' && out.hasColors();
  const history = sampleHistory();
  let drawnLines = 0;
  let lastDraw = 0;
  let pending: NodeJS.Timeout | undefined;
  let closed = false;

  const draw = () => {
    pending = undefined;
    const sample = history.latest();
    if (sample === undefined) return;
    const width = Math.max(20, (out.columns || 100) - 1);
    // Lines are cut to the terminal's width: a wrapped line would throw off the cursor movement.
    const lines = blockLines(sample, history.elapsedMs(), history.ratePerSecond(), color).map((line) =>
      fitWidth(line, width),
    );
    // Back to the first line of the previous block, clear to the end of the screen, draw again.
    const rewind = drawnLines > 0 ? `\x1b[${drawnLines}F\x1b[J` : '';
    out.write(`${rewind}${lines.join('\n')}\n`);
    drawnLines = lines.length;
    lastDraw = Date.now();
  };

  return {
    update(sample) {
      if (closed) return;
      history.add(sample);
      if (pending !== undefined) return;
      const wait = lastDraw + REDRAW_MS - Date.now();
      if (wait <= 0) draw();
      else pending = setTimeout(draw, wait).unref();
    },
    close() {
      if (closed) return;
      closed = true;
      clearTimeout(pending);
      draw();
    },
  };
}

function plainView(out: NodeJS.WriteStream): LiveView {
  const history = sampleHistory();
  let lastLineAt: number | undefined;
  let printedLatest = false;
  let closed = false;
  const print = () => {
    const sample = history.latest();
    if (sample === undefined) return;
    out.write(`${plainLine(sample, history.elapsedMs(), history.ratePerSecond())}\n`);
    lastLineAt = sample.at;
    printedLatest = true;
  };
  return {
    update(sample) {
      if (closed) return;
      history.add(sample);
      printedLatest = false;
      // Paced by the samples' own clock, not a timer: the same samples give the same lines.
      if (lastLineAt === undefined || sample.at - lastLineAt >= PLAIN_LINE_MS) print();
    },
    close() {
      if (closed) return;
      closed = true;
      if (!printedLatest) print();
    },
  };
}

/** The samples of the last few seconds, for a rate, and the first one, for the elapsed time. */
function sampleHistory() {
  let first: Sample | undefined;
  let recent: Sample[] = [];
  return {
    add(sample: Sample) {
      first ??= sample;
      recent = [...recent.filter((s) => sample.at - s.at <= RATE_WINDOW_MS), sample];
    },
    latest: (): Sample | undefined => recent[recent.length - 1],
    elapsedMs: () =>
      first === undefined || recent.length === 0 ? 0 : (recent[recent.length - 1]?.at ?? first.at) - first.at,
    /** Outbox rows per second over the window; null until two samples are a moment apart. */
    ratePerSecond(): number | null {
      const oldest = recent[0];
      const newest = recent[recent.length - 1];
      if (oldest === undefined || newest === undefined || newest.at - oldest.at < 500) return null;
      return ((newest.published - oldest.published) * 1000) / (newest.at - oldest.at);
    },
  };
}

const CONSUMER_WIDTH = 20;

function blockLines(sample: Sample, elapsedMs: number, rate: number | null, color: boolean): string[] {
  const bold = (text: string) => (color ? `\x1b[1m${text}\x1b[22m` : text);
  const warn = (text: string, on: boolean) => (color && on ? `\x1b[33m${text}\x1b[39m` : text);
  const alarm = (text: string, on: boolean) => (color && on ? `\x1b[31m${text}\x1b[39m` : text);
  const { seats } = sample;
  const number = (n: number, width: number) => count(n).padStart(width);
  return [
    `${bold(`on-sale +${clock(elapsedMs)}`)}  seats sold ${count(seats.sold)}  held ${count(seats.held)}  free ${count(seats.free)}`,
    `events published ${count(sample.published)}${rate === null ? '' : ` (${count(Math.round(rate))}/s)`}`,
    `  ${'consumer'.padEnd(CONSUMER_WIDTH)} ${'published'.padStart(10)} ${'handled'.padStart(10)} ${'lag'.padStart(8)}`,
    ...sample.consumers.map(
      (c) =>
        `  ${printable(c.consumer).padEnd(CONSUMER_WIDTH)} ${number(c.published, 10)} ${number(c.handled, 10)} ${warn(number(c.lag, 8), c.lag > 0)}`,
    ),
    `slot WAL retained ${walSize(sample.retainedWalBytes)}   alerts firing: ${alarm(firing(sample), sample.firing.length > 0)}`,
  ];
}

function plainLine(sample: Sample, elapsedMs: number, rate: number | null): string {
  const { seats } = sample;
  const consumers = sample.consumers
    .map((c) => `${printable(c.consumer)} ${c.handled}/${c.published} lag ${c.lag}`)
    .join(', ');
  return [
    `rehearsal +${clock(elapsedMs)} seats sold ${seats.sold} held ${seats.held} free ${seats.free}`,
    `published ${sample.published}${rate === null ? '' : ` (${Math.round(rate)}/s)`}`,
    `handled ${consumers}`,
    `WAL ${walSize(sample.retainedWalBytes)}`,
    `firing: ${firing(sample)}`,
  ].join(' | ');
}

function firing(sample: Sample): string {
  return sample.firing.length === 0 ? 'none' : sample.firing.map(printable).join(', ');
}

function walSize(bytes: number | null): string {
  if (bytes === null) return 'unknown (slot missing or unreadable)';
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

function clock(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  return `${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** Names come from other programs (alert names, consumer names): no control characters reach the terminal. */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

/** Cuts a line to `width` visible characters, keeping its colour codes whole. */
function fitWidth(line: string, width: number): string {
  let visible = 0;
  let result = '';
  // eslint-disable-next-line no-control-regex
  for (const part of line.split(/(\x1b\[[0-9;]*[A-Za-z])/)) {
    if (part.startsWith('\x1b[')) {
      result += part;
      continue;
    }
    const room = width - visible;
    if (room <= 0) continue;
    result += part.slice(0, room);
    visible += Math.min(part.length, room);
  }
  return result;
}
