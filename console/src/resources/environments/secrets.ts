// The secrets editor's rows and the operations they send. Values are never
// read back, so an existing secret's row starts with an empty value: left
// empty it keeps the stored value.
import type { EnvironmentSecret, SecretType } from './types';

export interface SecretRow {
  /** A local key for React, stable while the dialog is open. */
  rowKey: string;
  /** The server's id; none for a secret added in this dialog. */
  id?: number;
  type: SecretType;
  name: string;
  /** The name read from the server, to tell a rename. */
  storedName?: string;
  /** A new value; "" keeps the stored one. */
  value: string;
  deleted: boolean;
}

export function rowsOf(secrets: EnvironmentSecret[] | null | undefined): SecretRow[] {
  return (secrets ?? []).map((s) => ({
    rowKey: `stored-${s.id}`,
    id: s.id,
    type: s.type,
    name: s.name,
    storedName: s.name,
    value: '',
    deleted: false,
  }));
}

/** What a save sends: only the secrets added, changed or deleted. */
export function secretOperations(rows: SecretRow[]): EnvironmentSecret[] {
  const ops: EnvironmentSecret[] = [];
  for (const row of rows) {
    const name = row.name.trim();
    if (row.id === undefined) {
      if (!row.deleted) ops.push({ type: row.type, name, secret: row.value, operation: 'create' });
    } else if (row.deleted) {
      ops.push({ id: row.id, type: row.type, name: row.storedName ?? name, secret: '', operation: 'delete' });
    } else if (name !== row.storedName || row.value !== '') {
      ops.push({ id: row.id, type: row.type, name, secret: row.value, operation: 'update' });
    }
  }
  return ops;
}

const secretName = /^[-._a-zA-Z0-9]+$/;

/** A row's message, if its name cannot be saved (the server's rule). */
export function secretNameError(row: SecretRow): string | undefined {
  if (row.deleted) return undefined;
  const name = row.name.trim();
  if (!name) return 'Name is required';
  if (!secretName.test(name)) return 'Use only letters, digits, "-", "." and "_"';
  return undefined;
}
