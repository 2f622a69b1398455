import type { Errors } from '../../components/useLazyValidation';

export interface InventoryFormValues {
  name: string;
  sshKeyId: string;
  becomeKeyId: string;
  type: string;
  /** The hosts, INI or YAML text, for the static types. */
  inventory: string;
  /** The file's path in the repository, for type file. */
  path: string;
  repositoryId: string;
}

export type InventoryField = 'name' | 'sshKeyId' | 'type' | 'path';

/**
 * Inventory (docs/features.md §5): name, user credentials and type required; a path
 * for type file. Sudo credentials are optional.
 */
export function validateInventory(v: InventoryFormValues): Errors<InventoryField> {
  const errors: Errors<InventoryField> = {};
  if (!v.name.trim()) errors.name = 'Name is required';
  if (!v.sshKeyId) errors.sshKeyId = 'User credentials is required';
  if (!v.type) errors.type = 'Type is required';
  if (v.type === 'file' && !v.path.trim()) errors.path = 'Path to Inventory file is required';
  return errors;
}
