import { avatarColor, initials } from '../avatar';
import './ProjectAvatar.css';

/** A coloured circle with the project's initials (docs/features.md §2). */
export function ProjectAvatar({ name, index }: { name: string; index: number }) {
  const color = avatarColor(index);
  return (
    <span className={`bastion-avatar bastion-avatar--${color}`} data-color={color} aria-hidden>
      {initials(name)}
    </span>
  );
}
