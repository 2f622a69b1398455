import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { FormDialog } from '../../components/FormDialog';
import { TextField } from '../../components/FormFields';
import { SelectField } from '../../components/SelectField';
import { TextAreaField } from '../../components/TextAreaField';
import { useLazyValidation } from '../../components/useLazyValidation';
import type { Key } from '../keys/types';
import type { Repository } from '../repositories/types';
import type { Inventory, InventoryType } from './types';
import { useInventoryTypeTitle } from './inventoryTypes';
import { useSaveInventory } from './useInventories';
import { validateInventory, type InventoryFormValues } from './validation';

interface InventoryDialogProps {
  projectId: number;
  inventory?: Inventory;
  keys: Key[];
  repositories: Repository[];
  onClose(): void;
}

const examples: Record<string, string> = {
  static: '[web]\nweb1.example.com\n\n[db]\ndb1.example.com ansible_user=admin',
  'static-yaml': 'all:\n  children:\n    web:\n      hosts:\n        web1.example.com:',
};

/** New and edit inventory (docs/features.md §2, §3, §5). */
export function InventoryDialog({ projectId, inventory, keys, repositories, onClose }: InventoryDialogProps) {
  const { t } = useTranslation('resources');
  const typeTitle = useInventoryTypeTitle();
  const save = useSaveInventory(projectId);
  const [values, setValues] = useState<InventoryFormValues>({
    name: inventory?.name ?? '',
    sshKeyId: inventory?.ssh_key_id ? String(inventory.ssh_key_id) : '',
    becomeKeyId: inventory?.become_key_id ? String(inventory.become_key_id) : '',
    type: inventory?.type ?? 'static',
    // Text and path are kept apart, so switching the type does not turn
    // hosts into a path or a path into hosts.
    inventory: inventory && inventory.type !== 'file' ? inventory.inventory : '',
    path: inventory?.type === 'file' ? inventory.inventory : '',
    repositoryId: inventory?.repository_id ? String(inventory.repository_id) : '',
  });
  const { errors, check } = useLazyValidation(values, validateInventory);
  const set = (field: keyof InventoryFormValues) => (value: string) => setValues((v) => ({ ...v, [field]: value }));
  const error = (message?: string) => message && t(message);
  const keyOptions = keys.map((key) => ({ value: String(key.id), label: key.name }));
  // terraform-workspace inventories come from other clients: kept, not offered.
  const types: InventoryType[] = ['static', 'static-yaml', 'file'];
  if (inventory?.type === 'terraform-workspace') types.push('terraform-workspace');
  const isFile = values.type === 'file';

  const onSave = () => {
    if (!check()) return;
    save.mutate(
      {
        ...(inventory && { id: inventory.id }),
        project_id: projectId,
        name: values.name.trim(),
        ssh_key_id: Number(values.sshKeyId),
        become_key_id: values.becomeKeyId ? Number(values.becomeKeyId) : null,
        type: values.type as InventoryType,
        inventory: isFile ? values.path.trim() : values.inventory,
        repository_id: isFile && values.repositoryId ? Number(values.repositoryId) : null,
      },
      { onSuccess: onClose },
    );
  };

  return (
    <FormDialog
      title={inventory ? t('Edit Inventory') : t('New Inventory')}
      saveLabel={inventory ? t('Save') : t('Create')}
      isOpen
      onClose={onClose}
      onSave={onSave}
      isSaving={save.isPending}
      error={save.error ? errorMessage(save.error) : undefined}
    >
      <TextField id="inventory-name" label={t('Name')} value={values.name} onChange={set('name')} error={error(errors.name)} isRequired autoFocus />
      <SelectField
        id="inventory-user-key"
        label={t('User Credentials')}
        value={values.sshKeyId}
        placeholder={t('Select a key')}
        options={keyOptions}
        onChange={set('sshKeyId')}
        error={error(errors.sshKeyId)}
        isRequired
      />
      <SelectField
        id="inventory-sudo-key"
        label={t('Sudo Credentials (optional)')}
        value={values.becomeKeyId}
        placeholder={t('None')}
        emptyIsValue
        options={keyOptions}
        onChange={set('becomeKeyId')}
      />
      <SelectField
        id="inventory-type"
        label={t('Type')}
        value={values.type}
        placeholder={values.type ? undefined : t('Select a type')}
        options={types.map((type) => ({ value: type, label: typeTitle(type) }))}
        onChange={set('type')}
        error={error(errors.type)}
        isRequired
      />
      {isFile ? (
        <>
          <TextField
            id="inventory-path"
            label={t('Path to Inventory file')}
            value={values.path}
            onChange={set('path')}
            error={error(errors.path)}
            isRequired
            autoComplete="off"
            helper={t('A path inside the repository, for example inventories/production.ini')}
          />
          <SelectField
            id="inventory-repository"
            label={t('Repository (optional)')}
            value={values.repositoryId}
            placeholder={t("The template's repository")}
            emptyIsValue
            options={repositories.map((repo) => ({ value: String(repo.id), label: repo.name }))}
            onChange={set('repositoryId')}
          />
        </>
      ) : (
        <TextAreaField
          id="inventory-content"
          label={values.type === 'static-yaml' ? t('Inventory (YAML)') : t('Inventory (INI)')}
          value={values.inventory}
          onChange={set('inventory')}
          isCode
          rows={10}
          placeholder={examples[values.type]}
        />
      )}
    </FormDialog>
  );
}
