const units: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

/** "5 minutes ago" in the interface language (docs/features.md §9: dates as relative time). */
export function relativeTime(date: string | Date, locale: string, now = Date.now()): string {
  const time = new Date(date).getTime();
  if (Number.isNaN(time)) return '—';
  const seconds = Math.round((time - now) / 1000);
  const [unit, size] = units.find(([, s]) => Math.abs(seconds) >= s) ?? units[units.length - 1];
  return new Intl.RelativeTimeFormat(locale.replace('_', '-'), { numeric: 'auto' }).format(
    Math.round(seconds / size),
    unit,
  );
}
