import { describe, expect, it } from 'vitest';
import { ago, dateTime, duration, EMPTY, humanDuration, timeOfDay } from '../dates';

describe('dates in the chosen language (spec §9)', () => {
  const now = Date.parse('2026-11-23T12:00:00Z');

  it('shows a dash for empty values', () => {
    for (const empty of [null, undefined, '', 'not a date', '0001-01-01T00:00:00Z']) {
      expect(ago(empty, 'en', now)).toBe(EMPTY);
      expect(dateTime(empty, 'en')).toBe(EMPTY);
      expect(timeOfDay(empty, 'en')).toBe(EMPTY);
      expect(duration(empty, null, 'en', now)).toBe(EMPTY);
    }
  });

  it('shows relative times', () => {
    expect(ago('2026-11-23T11:55:00Z', 'en', now)).toBe('5 minutes ago');
    expect(ago('2026-11-23T11:55:00Z', 'de', now)).toBe('vor 5 Minuten');
    expect(ago('2026-11-22T12:00:00Z', 'pt_br', now)).toBe('ontem');
  });

  it('humanises durations with the two largest units', () => {
    expect(humanDuration(4, 'en')).toBe('4 sec');
    expect(humanDuration(64, 'en')).toBe('1 min, 4 sec');
    expect(humanDuration(3600 + 120 + 5, 'en')).toBe('1 hr, 2 min');
    expect(humanDuration(3600 + 5, 'en')).toBe('1 hr');
    expect(humanDuration(0, 'en')).toBe('0 sec');
    expect(humanDuration(64, 'ru')).toBe('1 мин 4 с');
  });

  it('counts a running task up to now', () => {
    expect(duration('2026-11-23T11:59:30Z', null, 'en', now)).toBe('30 sec');
    expect(duration('2026-11-23T11:00:00Z', '2026-11-23T11:00:09Z', 'en', now)).toBe('9 sec');
  });

  it('writes date and time as the language does', () => {
    expect(dateTime('2026-11-23T10:05:09Z', 'en')).toMatch(/Nov 23, 2026/);
    expect(dateTime('2026-11-23T10:05:09Z', 'de')).toMatch(/23\.11\.2026/);
  });
});
