// Dates as the task screens show them (docs/features.md §9): relative times, times and
// humanised durations in the interface language, and a dash where there is
// no value. Intl does the wording, so every language reads naturally.
import { relativeTime } from '../../app/relativeTime';

export const EMPTY = '—';

/** i18next codes (pt_br) as BCP 47 tags (pt-BR). */
function tag(locale: string): string {
  return locale.replace('_', '-');
}

function valid(date: string | Date | null | undefined): Date | undefined {
  if (!date) return undefined;
  const d = new Date(date);
  // The zero time some servers send for "never" is no date either.
  return Number.isNaN(d.getTime()) || d.getFullYear() < 1971 ? undefined : d;
}

/** "5 minutes ago", or a dash. */
export function ago(date: string | null | undefined, locale: string, now = Date.now()): string {
  const d = valid(date);
  return d ? relativeTime(d, locale, now) : EMPTY;
}

/** The date and time, as the language writes them ("23 Nov 2026, 17:05:09"), or a dash. */
export function dateTime(date: string | null | undefined, locale: string): string {
  const d = valid(date);
  return d
    ? new Intl.DateTimeFormat(tag(locale), { dateStyle: 'medium', timeStyle: 'medium' }).format(d)
    : EMPTY;
}

/** The time of day only ("17:05:09"), or a dash. */
export function timeOfDay(date: string | null | undefined, locale: string): string {
  const d = valid(date);
  return d ? new Intl.DateTimeFormat(tag(locale), { timeStyle: 'medium' }).format(d) : EMPTY;
}

/**
 * A humanised duration ("1 hr, 2 min", "4 sec"): the two largest units that
 * are not zero, or a dash. A task still running counts up to now.
 */
export function duration(
  start: string | null | undefined,
  end: string | null | undefined,
  locale: string,
  now = Date.now(),
): string {
  const from = valid(start);
  if (!from) return EMPTY;
  const to = valid(end)?.getTime() ?? now;
  return humanDuration(Math.max(0, Math.round((to - from.getTime()) / 1000)), locale);
}

const units = [
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
] as const;

export function humanDuration(seconds: number, locale: string): string {
  const parts: string[] = [];
  let rest = seconds;
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 && parts.length < 2) {
      parts.push(new Intl.NumberFormat(tag(locale), { style: 'unit', unit, unitDisplay: 'short' }).format(n));
    } else if (parts.length > 0) {
      break; // "1 hr, 0 min, 5 s" reads worse than "1 hr"
    }
  }
  if (parts.length === 0) {
    parts.push(new Intl.NumberFormat(tag(locale), { style: 'unit', unit: 'second', unitDisplay: 'short' }).format(0));
  }
  return new Intl.ListFormat(tag(locale), { type: 'unit', style: 'short' }).format(parts);
}
