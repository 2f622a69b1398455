import { useContext, useState } from 'react';
import { FormGroup, ToggleGroup, ToggleGroupItem } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { FormDialog } from '../../components/FormDialog';
import { FormDisabledContext, TextField } from '../../components/FormFields';
import { SelectField } from '../../components/SelectField';
import { useLazyValidation } from '../../components/useLazyValidation';
import type { Key } from '../keys/types';
import { urlType, urlTypes, withUrlType } from './gitUrl';
import type { Repository } from './types';
import { useSaveRepository } from './useRepositories';
import { validateRepository, type RepositoryFormValues } from './validation';

interface RepositoryDialogProps {
  projectId: number;
  repository?: Repository;
  keys: Key[];
  onClose(): void;
}

/** New and edit repository (docs/features.md §2, §4, §5). */
export function RepositoryDialog({ projectId, repository, keys, onClose }: RepositoryDialogProps) {
  const { t } = useTranslation('resources');
  const save = useSaveRepository(projectId);
  const [values, setValues] = useState<RepositoryFormValues>({
    name: repository?.name ?? '',
    gitUrl: repository?.git_url ?? '',
    gitBranch: repository?.git_branch ?? '',
    sshKeyId: repository?.ssh_key_id ? String(repository.ssh_key_id) : '',
  });
  const { errors, check } = useLazyValidation(values, validateRepository);
  const set = (field: keyof RepositoryFormValues) => (value: string) => setValues((v) => ({ ...v, [field]: value }));
  const error = (message?: string) => message && t(message);
  const local = urlType(values.gitUrl) === 'local';

  const onSave = () => {
    if (!check()) return;
    save.mutate(
      {
        ...(repository && { id: repository.id }),
        project_id: projectId,
        name: values.name.trim(),
        git_url: values.gitUrl.trim(),
        // A local path has no branch to choose (the field is disabled).
        git_branch: local ? '' : values.gitBranch.trim(),
        ssh_key_id: Number(values.sshKeyId),
      },
      { onSuccess: onClose },
    );
  };

  return (
    <FormDialog
      title={repository ? t('Edit Repository') : t('New Repository')}
      saveLabel={repository ? t('Save') : t('Create')}
      isOpen
      onClose={onClose}
      onSave={onSave}
      isSaving={save.isPending}
      error={save.error ? errorMessage(save.error) : undefined}
    >
      <TextField id="repository-name" label={t('Name')} value={values.name} onChange={set('name')} error={error(errors.name)} isRequired autoFocus />
      <UrlTypeChips url={values.gitUrl} onChange={set('gitUrl')} />
      <TextField
        id="repository-url"
        label={t('URL or path')}
        value={values.gitUrl}
        onChange={set('gitUrl')}
        error={error(errors.gitUrl)}
        isRequired
        autoComplete="off"
        helper={t('For example git@github.com:org/repo.git, https://host/repo.git or /srv/repo')}
      />
      <TextField
        id="repository-branch"
        label={t('Branch')}
        value={local ? '' : values.gitBranch}
        onChange={set('gitBranch')}
        error={local ? undefined : error(errors.gitBranch)}
        isRequired={!local}
        isDisabled={local}
        autoComplete="off"
        helper={local ? t('A local path is used as it is, with no branch.') : undefined}
      />
      <SelectField
        id="repository-key"
        label={t('Access Key')}
        value={values.sshKeyId}
        placeholder={t('Select a key')}
        options={keys.map((key) => ({ value: String(key.id), label: key.name }))}
        onChange={set('sshKeyId')}
        error={error(errors.sshKeyId)}
        isRequired
      />
    </FormDialog>
  );
}

/** The URL type chips (docs/features.md §4): the current type is pressed; a press rewrites the prefix. */
function UrlTypeChips({ url, onChange }: { url: string; onChange(url: string): void }) {
  const { t } = useTranslation('resources');
  const saving = useContext(FormDisabledContext);
  const current = urlType(url);
  return (
    <FormGroup label={t('URL type')} role="group" fieldId="repository-url-type">
      <ToggleGroup aria-label={t('URL type')} isCompact>
        {urlTypes.map((type) => (
          <ToggleGroupItem
            key={type}
            text={type}
            buttonId={`repository-url-type-${type}`}
            isSelected={current === type}
            isDisabled={saving}
            onChange={() => onChange(withUrlType(url, type))}
          />
        ))}
      </ToggleGroup>
    </FormGroup>
  );
}
