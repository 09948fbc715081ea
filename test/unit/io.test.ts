import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IOStreams, neutralizeControls, textWidth } from '../../src/core/io.js';

/** A fake terminal on stderr of `columns` width (changeable), and a stdin that records raw-mode calls. */
function term(columns: number, env: NodeJS.ProcessEnv = { NO_COLOR: '1' }) {
  const stderr = Object.assign(new PassThrough(), { isTTY: true, columns });
  const stdout = Object.assign(new PassThrough(), { isTTY: true, columns });
  const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: vi.fn() });
  let err = '';
  let out = '';
  stderr.on('data', (c) => (err += c));
  stdout.on('data', (c) => (out += c));
  const io = new IOStreams({ stdin, stdout, stderr, env });
  return { io, stderr, stdin, err: () => err, out: () => out };
}

const CURSOR_UP = /\u001b\[\d*A/;

afterEach(() => {
  vi.useRealTimers();
});

describe('progress', () => {
  it('on a terminal of known width: one spinner line redrawn with CR + erase-line, cut to the width, never cursor-up', () => {
    vi.useFakeTimers();
    const t = term(40);
    expect(t.io.liveProgress).toBe(true);
    const p = t.io.progress('x'.repeat(100));
    vi.advanceTimersByTime(1000);
    p.update('fetched 2 of 3');
    p.succeed('fetched 3');
    const err = t.err();
    expect(err).toContain('\r\u001b[2K');
    expect(err).not.toMatch(CURSOR_UP);
    // every drawn frame fits in the 40 columns: nothing wraps, so nothing needs cursor-up to clear
    for (const frame of err.split('\r\u001b[2K')) expect(Array.from(frame.replace(/\n$/, '')).length).toBeLessThanOrEqual(40);
    expect(err.endsWith('✓ fetched 3\n')).toBe(true);
  });

  it('cuts wide text by terminal columns, so a spinner line of CJK text never wraps', () => {
    vi.useFakeTimers();
    const t = term(20);
    const p = t.io.progress('メンバーを一つずつ更新しています');
    p.stop();
    for (const frame of t.err().split('\r\u001b[2K')) expect(textWidth(frame)).toBeLessThanOrEqual(20);
    expect(t.err()).toContain('…');
  });

  it('never touches stdin: no raw mode, no reader (Ctrl-C stays a signal)', () => {
    vi.useFakeTimers();
    const t = term(80);
    const p = t.io.progress('settling');
    vi.advanceTimersByTime(500);
    p.stop();
    expect(t.stdin.setRawMode).not.toHaveBeenCalled();
    expect(t.stdin.listenerCount('data')).toBe(0);
    expect(t.stdin.listenerCount('readable')).toBe(0);
  });

  it('with 0 or unknown columns, piped, or in CI: one plain line per step, no escape sequences, no timer', () => {
    vi.useFakeTimers();
    for (const t of [term(0), term(Number.NaN), term(80, { NO_COLOR: '1', CI: 'true' }), term(80, { NO_COLOR: '1', TERM: 'dumb' })]) {
      expect(t.io.liveProgress).toBe(false);
      const p = t.io.progress('fetching stories search');
      p.update('fetched 25');
      p.update('fetched 25');
      p.update('fetched 50');
      vi.advanceTimersByTime(10_000);
      p.succeed('fetched 50 stories');
      expect(t.err()).toBe('… fetching stories search\n… fetched 25\n… fetched 50\n✓ fetched 50 stories\n');
      expect(vi.getTimerCount()).toBe(0);
    }
  });

  it('a terminal that shrinks to 0 columns mid-run switches to plain lines instead of redrawing', () => {
    vi.useFakeTimers();
    const t = term(80);
    const p = t.io.progress('waiting');
    t.stderr.columns = 0;
    vi.advanceTimersByTime(1000);
    p.update('still waiting');
    p.fail('gave up');
    const afterShrink = t.err().slice(t.err().lastIndexOf('\r\u001b[2K') + '\r\u001b[2K'.length);
    expect(afterShrink).toBe('… waiting\n… still waiting\n✗ gave up\n');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('prints nothing once finished or ended (e.g. after an interrupt), so no progress follows a summary', () => {
    for (const width of [0, 80]) {
      const t = term(width);
      const p = t.io.progress('applying 4 change(s)');
      p.fail('interrupted after 1 of 4 change(s)');
      const before = t.err();
      p.update('2/4 done');
      p.succeed('applied');
      expect(t.err()).toBe(before);
      const q = t.io.progress('next');
      t.io.endProgress();
      const ended = t.err();
      q.update('more');
      q.succeed();
      expect(t.err()).toBe(ended);
    }
  });

  it('a message written while the spinner runs goes on its own line; the spinner is drawn again below it', () => {
    const t = term(80);
    const p = t.io.progress('settling');
    t.io.warn('rate limit: waiting 5 s');
    p.stop();
    expect(t.err()).toMatch(/^\r\u001b\[2K. settling\r\u001b\[2K! rate limit: waiting 5 s\n\r\u001b\[2K. settling\r\u001b\[2K$/);
  });
});

describe('neutralizeControls', () => {
  it('shows ESC, BEL, CR, backspace, DEL and C1 visibly and keeps newline and tab', () => {
    expect(neutralizeControls('bad\u001b]0;pwned\u0007 \u001b[31mred\u001b[0m')).toBe('bad^[]0;pwned^G ^[[31mred^[[0m');
    expect(neutralizeControls('a\rb\bc\u007fd\u009be')).toBe('a^Mb^Hc^?d<U+009B>e');
    expect(neutralizeControls('line 1\r\nline 2\n\tindented')).toBe('line 1\nline 2\n\tindented');
    expect(neutralizeControls('plain ünïcode ✓')).toBe('plain ünïcode ✓');
  });

  it('applies to warnings and successes on a terminal only (piped text stays as sent)', () => {
    const t = term(80);
    t.io.warn('server says \u001b[2J');
    t.io.success('made \u0007');
    expect(t.err()).toBe('! server says ^[[2J\n✓ made ^G\n');
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c) => (err += c));
    const piped = new IOStreams({ stderr, stdout: new PassThrough(), stdin: new PassThrough(), env: { NO_COLOR: '1' }, stderrTTY: false });
    piped.warn('server says \u001b[2J');
    expect(err).toBe('! server says \u001b[2J\n');
  });
});

describe('signal notices', () => {
  it('offer Ctrl-C only for Ctrl-C, and say what happens next', async () => {
    const { signalNotice } = await import('../../src/cli.js');
    expect(signalNotice({ signal: 'SIGINT', count: 1, safePoint: true })).toBe(
      'interrupted: stopping at the next safe point; press Ctrl-C again to quit at once',
    );
    expect(signalNotice({ signal: 'SIGTERM', count: 1, safePoint: true })).toBe('terminated (SIGTERM): stopping at the next safe point');
    expect(signalNotice({ signal: 'SIGINT', count: 2, safePoint: true })).toBe('interrupted again: quitting now');
    expect(signalNotice({ signal: 'SIGTERM', count: 2, safePoint: true })).toBe('terminated (SIGTERM) again: quitting now');
    expect(signalNotice({ signal: 'SIGINT', count: 1, safePoint: false })).toBe('interrupted');
    expect(signalNotice({ signal: 'SIGTERM', count: 1, safePoint: false })).toBe('terminated (SIGTERM)');
  });
});
