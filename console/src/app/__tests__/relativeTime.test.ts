import { describe, expect, it } from 'vitest';
import { relativeTime } from '../relativeTime';

const now = Date.parse('2025-06-15T12:00:00Z');

describe('relative time (spec §9)', () => {
  it('says how long ago, in the interface language', () => {
    expect(relativeTime('2025-06-15T11:55:00Z', 'en', now)).toBe('5 minutes ago');
    expect(relativeTime('2025-06-15T11:59:30Z', 'en', now)).toBe('30 seconds ago');
    expect(relativeTime('2025-06-14T12:00:00Z', 'en', now)).toBe('yesterday');
    expect(relativeTime('2025-06-01T12:00:00Z', 'en', now)).toBe('2 weeks ago');
    expect(relativeTime('2025-06-15T09:00:00Z', 'de', now)).toBe('vor 3 Stunden');
    expect(relativeTime('2025-06-15T09:00:00Z', 'pt_BR', now)).toBe('há 3 horas');
  });

  it('shows a dash for an empty or unreadable date', () => {
    expect(relativeTime('', 'en', now)).toBe('—');
    expect(relativeTime('not a date', 'en', now)).toBe('—');
  });
});
