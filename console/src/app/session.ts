// The browser session: the server sets a JS-readable marker cookie named
// "semaphore" beside its HttpOnly session cookie (api-contract.md), so the
// console can tell whether anyone is signed in without a call.
import { useQuery } from '@tanstack/react-query';
import { apiGet, apiPost } from '../api/client';
import { queryKeys } from '../api/queryKeys';
import type { User } from '../resources/users/types';

const MARKER_COOKIE = 'semaphore';

export function hasSessionCookie(cookies: string = document.cookie): boolean {
  return cookies.split(';').some((c) => {
    const [name, value] = c.trim().split('=');
    return name === MARKER_COOKIE && !!value;
  });
}

/**
 * Forgets a marker the server no longer honours (an expired or revoked
 * session), so the sign-in screen does not send the user straight back.
 */
export function clearSessionCookie(): void {
  document.cookie = `${MARKER_COOKIE}=; Max-Age=0; Path=/`;
}

/** Ends the session on the server and loads the sign-in screen afresh. */
export async function signOut(): Promise<void> {
  try {
    await apiPost('/auth/logout');
  } finally {
    clearSessionCookie();
    window.location.assign('/auth/login');
  }
}

/** The signed-in user (GET /api/user). */
export function useCurrentUser() {
  return useQuery({ queryKey: queryKeys.currentUser, queryFn: () => apiGet<User>('/user') });
}

/** Whether a user may create and restore projects; the server's rule. */
export function mayCreateProjects(user: User): boolean {
  return user.admin || user.can_create_project;
}
