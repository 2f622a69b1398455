import { act, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useSyncExternalStore } from 'react';
import { LINE_HEIGHT, LogView, MAX_SCROLL_HEIGHT, visibleWindow } from '../LogView';
import { TaskOutput } from '../taskOutput';

// jsdom lays nothing out: the log pane gets a 400-pixel viewport, and its
// scroll height is its spacer's height.
const VIEWPORT = 400;
const saved: PropertyDescriptor[] = [];
beforeEach(() => {
  const proto = Element.prototype;
  saved.push(Object.getOwnPropertyDescriptor(proto, 'clientHeight')!, Object.getOwnPropertyDescriptor(proto, 'scrollHeight')!);
  Object.defineProperty(proto, 'clientHeight', { configurable: true, get: () => VIEWPORT });
  Object.defineProperty(proto, 'scrollHeight', {
    configurable: true,
    get(this: Element) {
      const spacer = this.querySelector<HTMLElement>('.task-log__spacer');
      return spacer ? parseFloat(spacer.style.height) : VIEWPORT;
    },
  });
});
afterEach(() => {
  const proto = Element.prototype;
  Object.defineProperty(proto, 'clientHeight', saved[0]);
  Object.defineProperty(proto, 'scrollHeight', saved[1]);
  saved.length = 0;
});

function LiveLog({ output }: { output: TaskOutput }) {
  const version = useSyncExternalStore(output.subscribe, output.getVersion);
  return <LogView lines={output.lines} version={version} label="Output" empty="No output yet" />;
}

const renderedLines = () => [...document.querySelectorAll('.task-log__row')].map((row) => Number(row.getAttribute('data-line')));

describe('the log view', () => {
  it('takes 100,000 appended lines, renders only a window of rows and follows the end', async () => {
    const output = new TaskOutput(async () => [], (notify) => notify());
    await output.sync();
    render(<LiveLog output={output} />);
    expect(screen.getByText('No output yet')).toBeInTheDocument();
    const started = performance.now();
    act(() => {
      for (let i = 1; i <= 100_000; i++) output.append({ time: '2026-11-23T10:00:00Z', output: `\x1b[32mok: [host${i}]\x1b[0m` });
    });
    const elapsed = performance.now() - started;
    const log = screen.getByRole('log', { name: 'Output' });
    expect(log).toHaveAttribute('data-lines', '100000');
    const rows = renderedLines();
    expect(rows.length).toBeLessThan(100);
    expect(rows.at(-1)).toBe(100_000);
    expect(screen.getByText('ok: [host100000]')).toHaveClass('ansi-fg-2');
    expect(log).toHaveAttribute('data-following', 'true');
    expect(elapsed).toBeLessThan(5000);
  });

  it('stops following when the user scrolls up, and follows again from the button', async () => {
    const output = new TaskOutput(async () => [], (notify) => notify());
    await output.sync();
    render(<LiveLog output={output} />);
    act(() => {
      for (let i = 1; i <= 1000; i++) output.append({ time: '2026-11-23T10:00:00Z', output: `line ${i}` });
    });
    const log = screen.getByRole('log');
    act(() => {
      log.scrollTop = 0;
      log.dispatchEvent(new Event('scroll'));
    });
    expect(log).toHaveAttribute('data-following', 'false');
    act(() => output.append({ time: '2026-11-23T10:00:01Z', output: 'line 1001' }));
    expect(renderedLines()[0]).toBe(1); // still where the user left it
    act(() => screen.getByRole('button', { name: 'Follow the output' }).click());
    expect(log).toHaveAttribute('data-following', 'true');
    expect(renderedLines().at(-1)).toBe(1001);
  });
});

describe('the visible window', () => {
  it('maps a million lines onto a spacer browsers can scroll, reaching the last line', () => {
    const count = 1_000_000;
    const top = visibleWindow(count, 0, VIEWPORT);
    expect(top.scrollHeight).toBe(MAX_SCROLL_HEIGHT);
    expect(top.first).toBe(0);
    const end = visibleWindow(count, MAX_SCROLL_HEIGHT - VIEWPORT, VIEWPORT);
    expect(end.last).toBe(count);
    // The last line's bottom meets the spacer's bottom.
    expect((count - 1) * LINE_HEIGHT + end.offset + LINE_HEIGHT).toBe(MAX_SCROLL_HEIGHT);
    const middle = visibleWindow(count, (MAX_SCROLL_HEIGHT - VIEWPORT) / 2, VIEWPORT);
    expect(middle.first).toBeGreaterThan(count / 2 - 100);
    expect(middle.last - middle.first).toBeLessThan(100);
  });

  it('does not scale a short log', () => {
    expect(visibleWindow(100, 0, VIEWPORT)).toMatchObject({ first: 0, scrollHeight: 100 * LINE_HEIGHT, offset: 0 });
  });
});
