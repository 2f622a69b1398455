// The project switcher's avatar (docs/features.md §2): initials on a colour.

/** Colours cycle through the project list in this order. */
export const avatarColors = ['red', 'blue', 'orange', 'green'] as const;
export type AvatarColor = (typeof avatarColors)[number];

export function avatarColor(index: number): AvatarColor {
  return avatarColors[((index % avatarColors.length) + avatarColors.length) % avatarColors.length];
}

/** The first letters of the first two words of the name, in capitals. */
export function initials(name: string): string {
  return name
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((word) => Array.from(word)[0].toLocaleUpperCase())
    .join('');
}
