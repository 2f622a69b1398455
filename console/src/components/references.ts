// What refers to a project object (api-contract.md, "refs"), and whether
// that forbids its delete: the server's own rule (apiserver/refs.go), so the
// console never offers a delete the server would refuse.

export interface RefItem {
  id: number;
  name: string;
}

export interface References {
  templates: RefItem[];
  inventories: RefItem[];
  repositories: RefItem[];
  schedules: RefItem[];
  /** Ours: an integration that starts a template or uses a key. */
  integrations?: RefItem[];
}

/**
 * Templates, inventories, repositories and integrations always block a
 * delete; schedules only a repository's (a template's schedules go with
 * it, and nothing else can be scheduled).
 */
export function blockingReferences(kind: string, refs: References): Partial<References> {
  const blocking: Partial<References> = {};
  const groups = ['templates', 'inventories', 'repositories', 'integrations', ...(kind === 'repository' ? ['schedules'] : [])] as const;
  for (const group of groups as readonly (keyof References)[]) {
    const items = refs[group] ?? [];
    if (items.length > 0) blocking[group] = items;
  }
  return blocking;
}

export function isBlocked(kind: string, refs: References): boolean {
  return Object.keys(blockingReferences(kind, refs)).length > 0;
}

/** Where a referring object is shown (docs/features.md §8's links). */
export function referenceLink(projectId: number, group: keyof References, item: RefItem): string | undefined {
  switch (group) {
    case 'templates':
      return `/project/${projectId}/templates/${item.id}`;
    case 'inventories':
      return `/project/${projectId}/inventory`;
    case 'repositories':
      return `/project/${projectId}/repositories`;
    case 'integrations':
      return `/project/${projectId}/integration/${item.id}`;
    default:
      return undefined; // a schedule lives on its template's page, which refs do not name
  }
}
