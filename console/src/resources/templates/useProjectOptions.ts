// The project's objects a template refers to, for the editor's selects and
// the list's name columns. Only id and name are read here; the resource
// screens own the rest of each shape.
import { useQuery } from '@tanstack/react-query';
import { apiGet } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';

export interface Named {
  id: number;
  name: string;
}

const kinds = {
  keys: { key: queryKeys.keys, path: 'keys' },
  repositories: { key: queryKeys.repositories, path: 'repositories' },
  inventories: { key: queryKeys.inventories, path: 'inventory' },
  environments: { key: queryKeys.environments, path: 'environment' },
} as const;

export type OptionKind = keyof typeof kinds;

export function useProjectOptions(projectId: number, kind: OptionKind) {
  const { key, path } = kinds[kind];
  return useQuery({
    queryKey: key(projectId),
    queryFn: () => apiGet<Named[]>(`/project/${projectId}/${path}`),
  });
}

/** id → name of one kind, for table cells; empty until loaded. */
export function useNames(projectId: number, kind: OptionKind): Map<number, string> {
  const { data } = useProjectOptions(projectId, kind);
  return new Map((data ?? []).map((item) => [item.id, item.name]));
}
