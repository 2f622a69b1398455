import { describe, expect, it } from 'vitest';
import {
  dailySeries,
  dayTicks,
  durationPoints,
  durationsPath,
  median,
  newerPage,
  olderPage,
  statsPath,
  totals,
  utcOffset,
  type RunDuration,
  type TaskStats,
} from '../chartData';

const stats: TaskStats = {
  days: 3,
  utc_offset: 60,
  items: [
    { date: '2026-11-24', success: 2, failed: 0, stopped: 1 },
    { date: '2026-11-25', success: 0, failed: 0, stopped: 0 },
    { date: '2026-11-26', success: 5, failed: 3, stopped: 0 },
  ],
};

function run(task_id: number, duration: number | null, status = 'success'): RunDuration {
  return { task_id, status, created: '2026-11-26T10:00:00Z', start: null, end: null, duration };
}

describe('History chart data', () => {
  it('stacks one aligned series per result, every day kept, labelled in the language', () => {
    const series = dailySeries(stats, 'en');
    expect(series.success.map((b) => [b.x, b.y])).toEqual([
      ['Nov 24', 2],
      ['Nov 25', 0],
      ['Nov 26', 5],
    ]);
    expect(series.failed.map((b) => b.y)).toEqual([0, 0, 3]);
    expect(series.stopped.map((b) => b.y)).toEqual([1, 0, 0]);
    expect(series.failed.map((b) => b.date)).toEqual(['2026-11-24', '2026-11-25', '2026-11-26']);
    // The day is the server's date, not shifted by the browser's zone.
    expect(dailySeries(stats, 'de').success[2].x).toBe('26. Nov.');
  });

  it('sums the period per result', () => {
    expect(totals(stats)).toEqual({ success: 7, failed: 3, stopped: 1, all: 11 });
  });

  it('labels about six days of thirty, today always', () => {
    const bars = Array.from({ length: 30 }, (_, i) => ({ x: `d${i}` }));
    const ticks = dayTicks(bars);
    expect(ticks).toHaveLength(6);
    expect(ticks.at(-1)).toBe('d29');
    expect(ticks[0]).toBe('d4');
    expect(dayTicks(bars.slice(0, 4))).toEqual(['d0', 'd1', 'd2', 'd3']);
  });

  it('plots runs oldest first and leaves out runs that never started', () => {
    const points = durationPoints([run(9, 12.5), run(8, null, 'stopped'), run(7, 30, 'error')]);
    expect(points).toEqual([
      { x: '#7', y: 30, taskId: 7, status: 'error' },
      { x: '#9', y: 12.5, taskId: 9, status: 'success' },
    ]);
    expect(median(points)).toBe(21.25);
    expect(median(durationPoints([run(3, 5), run(2, 1), run(1, 100)]))).toBe(5);
    expect(median([])).toBeUndefined();
  });

  it('pages older with next_before and back, and asks the API accordingly', () => {
    let cursors: number[] = [];
    expect(durationsPath(1, 4, cursors)).toBe('/project/1/templates/4/durations?limit=30');
    cursors = olderPage(cursors, { items: [], next_before: 120 });
    cursors = olderPage(cursors, { items: [], next_before: 90 });
    expect(durationsPath(1, 4, cursors)).toBe('/project/1/templates/4/durations?limit=30&before=90');
    expect(olderPage(cursors, { items: [], next_before: 0 })).toEqual([120, 90]); // the last page
    cursors = newerPage(cursors);
    expect(durationsPath(1, 4, cursors)).toBe('/project/1/templates/4/durations?limit=30&before=120');
    expect(newerPage(newerPage(cursors))).toEqual([]);
  });

  it("asks for 30 days in the reader's time zone, minutes east of UTC", () => {
    expect(utcOffset({ getTimezoneOffset: () => -120 } as Date)).toBe(120);
    expect(statsPath(2, -300)).toBe('/project/2/stats/tasks?days=30&utc_offset=-300');
  });
});
