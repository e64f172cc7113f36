import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createLiveView } from '../../rehearsal/live-view.js';
import type { RehearsalRecord, Sample } from '../../rehearsal/record.js';

const record = JSON.parse(readFileSync(new URL('./fixtures/record.json', import.meta.url), 'utf8')) as RehearsalRecord;
const last = record.samples[record.samples.length - 1]!;

/** A stand-in for stdout that keeps what is written; a terminal or a pipe by `isTTY`. */
function fakeStream(options: { isTTY: boolean; columns?: number; colors?: boolean }) {
  const chunks: string[] = [];
  const stream = {
    isTTY: options.isTTY,
    columns: options.columns ?? 120,
    hasColors: () => options.colors ?? false,
    write(chunk: string) {
      chunks.push(chunk);
      return true;
    },
  };
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => chunks.join('') };
}

/** What a terminal shows after the writes: the text after the last "clear to the end of the screen". */
function screen(text: string): string {
  return text.slice(text.lastIndexOf('\x1b[J') + 3);
}

// Any ANSI control sequence: colours, cursor movement, clearing.
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[/;

describe('live view, output not a terminal', () => {
  it('prints one plain line per five seconds of samples and the last state on close, without ANSI codes', () => {
    const { stream, text } = fakeStream({ isTTY: false });
    const view = createLiveView(stream);
    for (const sample of record.samples) view.update(sample);
    view.close();
    const lines = text().trimEnd().split('\n');

    expect(text()).not.toMatch(ANSI);
    // 120 samples about a second apart: a line at 0, 5, 10 … 115 s, and the final state at close.
    expect(lines.length).toBeGreaterThanOrEqual(20);
    expect(lines.length).toBeLessThanOrEqual(26);
    expect(lines[0]).toContain('firing: SlotLost');
    expect(lines[0]).toContain('WAL unknown (slot missing or unreadable)');

    const final = lines[lines.length - 1]!;
    expect(final).toContain(`seats sold ${last.seats.sold} held ${last.seats.held} free ${last.seats.free}`);
    expect(final).toContain(`published ${last.published}`);
    for (const c of last.consumers) expect(final).toContain(`${c.consumer} ${c.handled}/${c.published} lag ${c.lag}`);
    expect(final).toContain(`WAL ${(last.retainedWalBytes! / 1024 ** 2).toFixed(1)} MiB`);
    expect(final).toContain(`firing: ${last.firing.join(', ')}`);
  });

  it('shows the lag and alerts of a drill while it lasts', () => {
    const { stream, text } = fakeStream({ isTTY: false });
    const view = createLiveView(stream);
    const drill = record.drills[0]!;
    const during = record.samples.filter((s) => s.at <= drill.backAt!);
    for (const sample of during) view.update(sample);
    view.close();
    const final = text().trimEnd().split('\n').pop()!;
    const lagging = during[during.length - 1]!.consumers.find((c) => c.lag > 0)!;

    expect(final).toContain(`${lagging.consumer} ${lagging.handled}/${lagging.published} lag ${lagging.lag}`);
    expect(final).toMatch(/firing: .*ConsumerLagGrowing/);
  });
});

describe('live view on a terminal', () => {
  it('redraws one block in place and leaves the last state on screen', () => {
    const { stream, text } = fakeStream({ isTTY: true });
    const view = createLiveView(stream);
    view.update(record.samples[0]!);
    for (const sample of record.samples.slice(1)) view.update(sample);
    view.close();
    const shown = screen(text());
    const blockHeight = shown.trimEnd().split('\n').length;

    // The second draw moves the cursor back over the first block and clears below it.
    expect(text()).toContain(`\x1b[${blockHeight}F\x1b[J`);
    expect(shown).toContain(`seats sold ${last.seats.sold.toLocaleString('en-US')}`);
    expect(shown).toContain(`held ${last.seats.held}`);
    expect(shown).toContain(`free ${last.seats.free}`);
    expect(shown).toContain(`events published ${last.published.toLocaleString('en-US')}`);
    for (const c of last.consumers) {
      expect(shown).toMatch(
        new RegExp(
          `${c.consumer} +${c.published.toLocaleString('en-US')} +${c.handled.toLocaleString('en-US')} +${c.lag}`,
        ),
      );
    }
    expect(shown).toContain('slot WAL retained 3.');
    expect(shown).toContain(`alerts firing: ${last.firing.join(', ')}`);
  });

  it('draws no more often than a few times a second: a burst of samples is one redraw', () => {
    const { stream, text } = fakeStream({ isTTY: true });
    const view = createLiveView(stream);
    for (const sample of record.samples) view.update(sample);
    view.close();
    // The first sample at once, the rest of the burst is drawn once at close.
    expect(text().split('\x1b[J').length - 1).toBe(1);
  });

  it('keeps every line within the terminal width and control characters out of names', () => {
    const { stream, text } = fakeStream({ isTTY: true, columns: 40, colors: true });
    const view = createLiveView(stream);
    const hostile: Sample = { ...last, firing: ['Evil\x1b[2J\x07Alert'] };
    view.update(hostile);
    view.close();
    const shown = screen(text());

    expect(text()).not.toContain('\x1b[2J');
    // eslint-disable-next-line no-control-regex
    const visible = shown.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
    for (const line of visible.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(39);
    expect(shown).toContain('\x1b[1m');
  });
});
