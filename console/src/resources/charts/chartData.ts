// The data of History's charts (docs/features.md, "Beyond the anchors"),
// shaped for the chart components: kept apart from them so that tests check
// the numbers, not the SVG.

/** One day of GET /project/{id}/stats/tasks. */
export interface TaskDay {
  date: string; // YYYY-MM-DD in the reader's time zone
  success: number;
  failed: number;
  stopped: number;
}

export interface TaskStats {
  days: number;
  utc_offset: number;
  items: TaskDay[];
}

/** One run of GET templates/{id}/durations. */
export interface RunDuration {
  task_id: number;
  status: string;
  created: string;
  start: string | null;
  end: string | null;
  duration: number | null;
}

export interface DurationPage {
  items: RunDuration[];
  next_before: number;
}

export const results = ['success', 'failed', 'stopped'] as const;
export type Result = (typeof results)[number];

/** The days the chart shows. */
export const CHART_DAYS = 30;

/** How many runs one page of the trend shows. */
export const TREND_RUNS = 30;

/** The reader's time zone as the API takes it: minutes east of UTC. */
export function utcOffset(now = new Date()): number {
  return -now.getTimezoneOffset();
}

/** A short date ("Nov 26", "26 нояб.") for a YYYY-MM-DD day, whatever the browser's zone. */
export function dayLabel(date: string, locale: string): string {
  return new Intl.DateTimeFormat(locale.replace('_', '-'), { month: 'short', day: 'numeric', timeZone: 'UTC' }).format(
    new Date(`${date}T00:00:00Z`),
  );
}

export interface DayBar {
  x: string; // the day's label, the bars' category
  y: number;
  date: string;
}

/** One series of bars per result, each with every day in order, zeros included (stacked bars need aligned series). */
export function dailySeries(stats: TaskStats, locale: string): Record<Result, DayBar[]> {
  const out = { success: [], failed: [], stopped: [] } as Record<Result, DayBar[]>;
  for (const day of stats.items) {
    const x = dayLabel(day.date, locale);
    for (const r of results) out[r].push({ x, y: day[r], date: day.date });
  }
  return out;
}

/** The tasks the period holds, per result and in all. */
export function totals(stats: TaskStats): Record<Result | 'all', number> {
  const sum = { success: 0, failed: 0, stopped: 0, all: 0 };
  for (const day of stats.items) {
    for (const r of results) {
      sum[r] += day[r];
      sum.all += day[r];
    }
  }
  return sum;
}

/** Every few categories' label (days, runs), so thirty never overlap: about six on the axis. */
export function dayTicks(bars: { x: string }[], count = 6): string[] {
  if (bars.length <= count) return bars.map((b) => b.x);
  const step = Math.ceil(bars.length / count);
  // Counted back from the last day, so today always has its label.
  return bars.filter((_, i) => (bars.length - 1 - i) % step === 0).map((b) => b.x);
}

export interface RunPoint {
  x: string; // "#123": the run's category on the axis
  y: number; // seconds
  taskId: number;
  status: string;
}

/** A page of runs (newest first) as points oldest first, left to right; runs without a duration are left out. */
export function durationPoints(runs: RunDuration[]): RunPoint[] {
  return runs
    .filter((r): r is RunDuration & { duration: number } => r.duration !== null)
    .map((r) => ({ x: `#${r.task_id}`, y: r.duration, taskId: r.task_id, status: r.status }))
    .reverse();
}

/** The median duration of the points, in seconds (undefined for none). */
export function median(points: RunPoint[]): number | undefined {
  if (points.length === 0) return undefined;
  const ys = points.map((p) => p.y).sort((a, b) => a - b);
  const mid = Math.floor(ys.length / 2);
  return ys.length % 2 ? ys[mid] : (ys[mid - 1] + ys[mid]) / 2;
}

/**
 * The trend's pages: the cursors (?before=) of the pages shown so far, the
 * newest first. Older runs push the page's next_before, newer ones pop.
 */
export function olderPage(cursors: number[], page: DurationPage | undefined): number[] {
  return page && page.next_before > 0 ? [...cursors, page.next_before] : cursors;
}

export function newerPage(cursors: number[]): number[] {
  return cursors.slice(0, -1);
}

/** The API path of the trend's page at the last cursor. */
export function durationsPath(projectId: number, templateId: number, cursors: number[]): string {
  const before = cursors.at(-1);
  return `/project/${projectId}/templates/${templateId}/durations?limit=${TREND_RUNS}${before ? `&before=${before}` : ''}`;
}

/** The API path of the daily counts in the reader's time zone. */
export function statsPath(projectId: number, offset = utcOffset()): string {
  return `/project/${projectId}/stats/tasks?days=${CHART_DAYS}&utc_offset=${offset}`;
}
