import { describe, expect, it } from 'vitest';
import { avatarColor, initials } from '../avatar';

describe('project avatar (spec §2)', () => {
  it('takes the first letters of the first two words', () => {
    expect(initials('Demo Project')).toBe('DP');
    expect(initials('web  servers  of the north')).toBe('WS');
    expect(initials('infra')).toBe('I');
    expect(initials('  ')).toBe('');
    expect(initials('ёлка палка')).toBe('ЁП');
  });

  it('cycles red, blue, orange, green through the list', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map(avatarColor)).toEqual([
      'red', 'blue', 'orange', 'green', 'red', 'blue', 'orange', 'green',
    ]);
  });
});
