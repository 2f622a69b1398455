import { useMutation, useQuery } from '@tanstack/react-query';
import { apiGet, apiPost } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';
import type { Credentials } from './validation';

export interface OidcProvider {
  id: string;
  name: string;
  color?: string;
  icon?: string;
}

/** GET /api/auth/login: how this server lets people sign in. */
export interface LoginOptions {
  oidc_providers: OidcProvider[];
  login_with_password: boolean;
}

export function useLoginOptions(enabled = true) {
  return useQuery({
    queryKey: queryKeys.loginOptions,
    queryFn: () => apiGet<LoginOptions>('/auth/login'),
    enabled,
  });
}

/** POST /api/auth/login; the server sets the session cookies. */
export function useLogin() {
  return useMutation({
    mutationFn: ({ auth, password }: Credentials) => apiPost('/auth/login', { auth: auth.trim(), password }),
  });
}

/** Where an identity provider's button goes, carrying the page's query string. */
export function oidcLoginUrl(provider: OidcProvider, search: string): string {
  return `/api/auth/oidc/${encodeURIComponent(provider.id)}/login${search}`;
}

/**
 * Where a signed-in user links an identity provider to their account: the
 * server never links a password account or an admin on its own.
 */
export function oidcLinkUrl(provider: OidcProvider): string {
  return `/api/auth/oidc/${encodeURIComponent(provider.id)}/link`;
}
