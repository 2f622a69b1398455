import { describe, expect, it } from 'vitest';
import type { LogLine } from '../../../api/live';
import { OUTPUT_PAGE, REREAD, TaskOutput } from '../taskOutput';

/** A server holding `stored` lines, answering ?offset=&limit= as apiserver/task_output.go does. */
function server(stored: LogLine[]) {
  const reads: [number, number][] = [];
  return {
    reads,
    fetch: async (offset: number, limit: number) => {
      reads.push([offset, limit]);
      return stored.slice(offset, offset + limit);
    },
  };
}

const at = (i: number) => new Date(Date.UTC(2026, 10, 23, 10, 0, 0, i)).toISOString();
const line = (i: number, output = `line ${i}`): LogLine => ({ time: at(i), output });
const now = (fn: () => void) => fn();

describe('a task output', () => {
  it('reads a long log a page at a time, in order', async () => {
    const stored = Array.from({ length: OUTPUT_PAGE * 2 + 5 }, (_, i) => line(i));
    const api = server(stored);
    const output = new TaskOutput(api.fetch, now);
    await output.sync();
    expect(output.lines).toHaveLength(OUTPUT_PAGE * 2 + 5);
    expect(output.lines.at(-1)).toBe(`line ${OUTPUT_PAGE * 2 + 4}`);
    expect(api.reads).toEqual([[0, OUTPUT_PAGE], [OUTPUT_PAGE, OUTPUT_PAGE], [OUTPUT_PAGE * 2, OUTPUT_PAGE]]);
    expect(output.state).toBe('ready');
  });

  it('appends live lines, even identical ones', async () => {
    const output = new TaskOutput(server([]).fetch, now);
    await output.sync();
    output.append(line(1, ''));
    output.append(line(1, ''));
    output.append(line(2, 'ok'));
    expect(output.lines).toEqual(['', '', 'ok']);
  });

  it('reads again when live lines arrive during a read, so none is lost or doubled', async () => {
    const stored = [line(0), line(1)];
    let output!: TaskOutput;
    let first = true;
    output = new TaskOutput(async (offset, limit) => {
      const page = stored.slice(offset, offset + limit);
      if (first) {
        first = false;
        // Line 2 is stored and sent while the first read is on its way.
        stored.push(line(2));
        output.append(line(2));
      }
      return page;
    }, now);
    await output.sync();
    expect(output.lines).toEqual(['line 0', 'line 1', 'line 2']);
  });

  it('drops live lines that the last read already returned, then takes new ones', async () => {
    const stored = [line(0), line(1), line(2)];
    const output = new TaskOutput(server(stored).fetch, now);
    await output.sync();
    // Lines 1 and 2 were stored before the read and sent after it.
    output.append(line(1));
    output.append(line(2));
    output.append(line(3));
    output.append(line(3, 'line 3'));
    expect(output.lines).toEqual(['line 0', 'line 1', 'line 2', 'line 3', 'line 3']);
  });

  it('re-reads only the missing lines after a reconnect', async () => {
    const stored = [line(0), line(1)];
    const api = server(stored);
    const output = new TaskOutput(api.fetch, now);
    await output.sync();
    stored.push(line(2), line(3)); // sent while the socket was down
    await output.sync();
    expect(output.lines).toEqual(['line 0', 'line 1', 'line 2', 'line 3']);
    // From REREAD lines before the end (here the start): nothing is doubled.
    expect(api.reads.at(-1)).toEqual([0, OUTPUT_PAGE]);
  });

  it('knows which lines were on stderr: from the text stream’s list, the pages and the live lines', async () => {
    const stored = Array.from({ length: 5000 }, (_, i) => ({ ...line(i), ...(i % 1000 === 7 ? { stream: 'stderr' as const } : {}) }));
    const output = new TaskOutput(
      server(stored).fetch,
      now,
      async (onLines) => onLines(stored.slice(0, 3000).map((l) => l.output)), // plain text: no streams
      async () => [8, 1008, 2008], // GET …/stderr: numbers from 1
    );
    await output.sync();
    output.append(line(5000));
    output.append({ ...line(5001), stream: 'stderr' });
    expect([...output.stderr].sort((a, b) => a - b)).toEqual([7, 1007, 2007, 3007, 4007, 5001]);
  });

  it('keeps the log when the stderr list cannot be read (a server without it): only the marks are missing', async () => {
    const output = new TaskOutput(server([line(0), line(1)]).fetch, now, async () => {}, async () => Promise.reject(new Error('404')));
    await output.sync();
    expect(output.state).toBe('ready');
    expect(output.lines).toEqual(['line 0', 'line 1']);
    expect(output.stderr.size).toBe(0);
  });

  it('streams a long log as text first, then reads the pages from where the stream ended', async () => {
    const stored = Array.from({ length: 5000 }, (_, i) => line(i));
    const api = server(stored);
    const output = new TaskOutput(api.fetch, now, async (onLines) => {
      onLines(stored.slice(0, 3000).map((l) => l.output));
      onLines(stored.slice(3000, 4500).map((l) => l.output));
    });
    await output.sync();
    expect(output.lines).toHaveLength(5000);
    expect(output.lines.slice(4498, 4502)).toEqual(['line 4498', 'line 4499', 'line 4500', 'line 4501']);
    expect(api.reads).toEqual([[4500 - REREAD, OUTPUT_PAGE]]);
    // The re-read lines' times recognise a live line sent late.
    output.append(line(4999));
    output.append(line(5000));
    expect(output.lines.slice(-2)).toEqual(['line 4999', 'line 5000']);
  });

  it('reports a failed first read', async () => {
    const output = new TaskOutput(async () => Promise.reject(new Error('Failed to fetch')), now);
    await output.sync();
    expect(output.state).toBe('error');
    expect(String(output.error)).toContain('Failed to fetch');
  });

  it('tells its listeners at most once per frame', async () => {
    const frames: (() => void)[] = [];
    const output = new TaskOutput(server([]).fetch, (notify) => frames.push(notify));
    let calls = 0;
    output.subscribe(() => calls++);
    await output.sync();
    for (let i = 0; i < 1000; i++) output.append(line(i));
    expect(frames).toHaveLength(1);
    frames[0]();
    expect(calls).toBe(1);
    expect(output.getVersion()).toBeGreaterThan(1000);
  });
});
