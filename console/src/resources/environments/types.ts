export type SecretType = 'var' | 'env';

/**
 * A secret variable (api-contract.md, "environment"): a read answers its
 * name and type, never its value ("" always); a write says what to do.
 */
export interface EnvironmentSecret {
  id?: number;
  type: SecretType;
  name: string;
  secret: string;
  operation?: 'create' | 'update' | 'delete';
}

/** An environment as /api answers it. */
export interface Environment {
  id: number;
  name: string;
  project_id: number;
  password?: string;
  /** Extra variables: the text of a JSON object. */
  json: string;
  /** Environment variables: the text of a JSON object. */
  env: string;
  secrets: EnvironmentSecret[] | null;
}
