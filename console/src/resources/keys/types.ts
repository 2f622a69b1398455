/** Key types (docs/features.md §3). */
export type KeyType = 'ssh' | 'login_password' | 'none';

/** A key as /api answers it: the secret fields always empty (api-contract.md). */
export interface Key {
  id: number;
  name: string;
  type: KeyType;
  project_id: number;
  login_password: { login: string; password: string };
  ssh: { login: string; passphrase: string; private_key: string };
  override_secret: boolean;
  /** True when no secret is stored. */
  empty: boolean;
}
