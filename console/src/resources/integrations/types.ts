// The JSON shapes of integrations (incoming webhooks) as /api answers them
// (api-contract.md; docs/features.md §3).

/** "" is no check; github, token and hmac check the login_password key's password. */
export type AuthMethod = '' | 'github' | 'token' | 'hmac';

export interface Integration {
  id: number;
  name: string;
  project_id: number;
  template_id: number | null;
  auth_method: AuthMethod;
  auth_secret_id: number | null;
  auth_header: string;
  /** Reachable through the project's own aliases (docs/features.md §2's checkbox). */
  searchable: boolean;
  /** Passed back unchanged on save: the console does not edit it. */
  task_params?: unknown;
  /** Set when a GitOps tool manages it: read-only, its matchers, values and aliases too (docs/gitops.md). */
  managed_by?: string;
}

/** An alias is the integration's public URL; project-level ones reach every searchable integration. */
export interface IntegrationAlias {
  id: number;
  url: string;
  /** Set when a GitOps tool applied it: its tool removes it (docs/gitops.md). */
  managed_by?: string;
}

/** Where a matcher or an extracted value looks: the body or a header. */
export type Source = 'body' | 'header';
export type BodyDataType = 'json' | 'string';
export type MatchMethod = 'equals' | 'unequals' | 'contains';

export interface ExtractValue {
  id: number;
  integration_id: number;
  name: string;
  value_source: Source;
  /** "" when the source is a header. */
  body_data_type: BodyDataType | '';
  key: string;
  /** The environment variable the value becomes in the task. */
  variable: string;
}

export interface Matcher {
  id: number;
  integration_id: number;
  name: string;
  match_type: Source;
  method: MatchMethod;
  /** "" when matching on a header. */
  body_data_type: BodyDataType | '';
  key: string;
  value: string;
}

/** A key as far as the auth secret select needs it. */
export interface KeyOption {
  id: number;
  name: string;
  type: string;
}
