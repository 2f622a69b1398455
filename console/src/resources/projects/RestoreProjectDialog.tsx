import { useState } from 'react';
import { FileUpload, FormGroup } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { useNotify } from '../../app/Notifications';
import { FormDialog } from '../../components/FormDialog';
import { FieldError } from '../../components/FormFields';
import type { Project } from './types';
import { useRestoreProject } from './useProjects';
import { msg } from '../../i18n/msg';

export interface RestoreProjectDialogProps {
  onClose(): void;
  onRestored(project: Project): void;
}

/** Restore project (docs/features.md §2, §7): a backup file makes a new project. */
export function RestoreProjectDialog({ onClose, onRestored }: RestoreProjectDialogProps) {
  const { t } = useTranslation('projects');
  const notify = useNotify();
  const restore = useRestoreProject();
  const [file, setFile] = useState<{ name: string; text: string }>({ name: '', text: '' });
  const [error, setError] = useState<string>();

  const save = () => {
    if (!file.text) {
      setError(msg('Backup file is required'));
      return;
    }
    restore.mutate(file.text, {
      onSuccess: (project) => {
        notify.success(t('Project {{name}} restored', { name: project.name }));
        onRestored(project);
      },
    });
  };

  return (
    <FormDialog
      title={t('Restore project')}
      saveLabel={t('Restore')}
      isOpen
      onClose={onClose}
      onSave={save}
      isSaving={restore.isPending}
      error={restore.error ? errorMessage(restore.error) : undefined}
    >
      <FormGroup label={t('Backup file')} fieldId="restore-file" isRequired>
        <FileUpload
          id="restore-file"
          type="text"
          value={file.text}
          filename={file.name}
          filenamePlaceholder={t('Drag a backup file here or browse for one')}
          browseButtonText={t('Browse…')}
          clearButtonText={t('Clear')}
          hideDefaultPreview
          isDisabled={restore.isPending}
          dropzoneProps={{ accept: { 'application/json': ['.json'] } }}
          onFileInputChange={(_event, picked) => {
            setError(undefined);
            setFile((f) => ({ ...f, name: picked.name }));
          }}
          onDataChange={(_event, text) => setFile((f) => ({ ...f, text }))}
          onClearClick={() => setFile({ name: '', text: '' })}
        />
        <FieldError error={error} />
      </FormGroup>
    </FormDialog>
  );
}
