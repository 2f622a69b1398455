import type { Errors } from '../../components/useLazyValidation';

export interface InventoryFormValues {
  name: string;
  sshKeyId: string;
  becomeKeyId: string;
  type: string;
  inventory: string;
  repositoryId: string;
}

export type InventoryField = 'name' | 'sshKeyId' | 'type' | 'inventory';

/**
 * Inventory (spec §5): name, user credentials and type required; a path
 * for type file. Sudo credentials are optional.
 */
export function validateInventory(v: InventoryFormValues): Errors<InventoryField> {
  const errors: Errors<InventoryField> = {};
  if (!v.name.trim()) errors.name = 'Name is required';
  if (!v.sshKeyId) errors.sshKeyId = 'User credentials is required';
  if (!v.type) errors.type = 'Type is required';
  if (v.type === 'file' && !v.inventory.trim()) errors.inventory = 'Path to Inventory file is required';
  return errors;
}
