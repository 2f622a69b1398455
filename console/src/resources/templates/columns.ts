// Column visibility of a table, kept in the browser per table (docs/features.md §2:
// "saved locally per table, set through a column settings sheet").
import { useCallback, useState } from 'react';
import { readSetting, writeSetting } from '../../settings/settings';

export const templateColumns = [
  'name',
  'version',
  'status',
  'lastTask',
  'playbook',
  'inventory',
  'environment',
  'repository',
  'actions',
] as const;
export type TemplateColumn = (typeof templateColumns)[number];

/** The column headers, English keys of the "templates" catalog. */
export const columnTitles: Record<TemplateColumn, string> = {
  name: 'Name',
  version: 'Version',
  status: 'Status',
  lastTask: 'Last task',
  playbook: 'Playbook',
  inventory: 'Inventory',
  environment: 'Environment',
  repository: 'Repository',
  actions: 'Actions',
};

/** The name column identifies the row: it cannot be hidden. */
export const fixedColumns: readonly string[] = ['name'];

const storageKey = (table: string) => `tableColumns__${table}`;

/** The hidden columns of a table as stored; unknown names are dropped. */
export function readHiddenColumns(table: string, known: readonly string[]): string[] {
  try {
    const value: unknown = JSON.parse(readSetting(storageKey(table)) ?? '[]');
    if (!Array.isArray(value)) return [];
    return value.filter((c): c is string => typeof c === 'string' && known.includes(c) && !fixedColumns.includes(c));
  } catch {
    return [];
  }
}

export function writeHiddenColumns(table: string, hidden: string[]): void {
  writeSetting(storageKey(table), hidden.length ? JSON.stringify(hidden) : null);
}

/** The table's hidden columns, and a setter that keeps them. */
export function useHiddenColumns(table: string, known: readonly string[]) {
  const [hidden, setHidden] = useState(() => readHiddenColumns(table, known));
  const save = useCallback(
    (next: string[]) => {
      writeHiddenColumns(table, next);
      setHidden(next);
    },
    [table],
  );
  return [hidden, save] as const;
}
