/** A user as /api/user and /api/users show them (api-contract.md). */
export interface User {
  id: number;
  created?: string;
  username: string;
  name: string;
  email: string;
  admin: boolean;
  external: boolean;
  alert: boolean;
  can_create_project: boolean;
  /** Set when a GitOps tool applied the User object (docs/gitops.md). */
  managed_by?: string;
}
