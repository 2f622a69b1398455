/** Inventory types (docs/features.md §3); terraform-workspace is made by other clients. */
export type InventoryType = 'static' | 'static-yaml' | 'file' | 'terraform-workspace';

/** An inventory as /api answers it (api-contract.md). */
export interface Inventory {
  id: number;
  name: string;
  project_id: number;
  /** The hosts (INI or YAML text), or for type file a path in the repository. */
  inventory: string;
  ssh_key_id: number;
  become_key_id: number | null;
  type: InventoryType;
  repository_id: number | null;
}
