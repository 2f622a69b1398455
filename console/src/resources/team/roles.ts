import { msg } from '../../i18n/msg';

/** Project roles (docs/features.md §6), most powerful first, with their English titles. */
export const roles = [
  { slug: 'owner', title: msg('Owner') },
  { slug: 'manager', title: msg('Manager') },
  { slug: 'task_runner', title: msg('Task Runner') },
  { slug: 'guest', title: msg('Guest') },
] as const;

/** A role's English title (translate with t()), or the slug of an unknown role. */
export function roleTitle(slug: string): string {
  return roles.find((r) => r.slug === slug)?.title ?? slug;
}
