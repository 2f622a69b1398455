import { lazy, useState } from 'react';
import { Flex, Label } from '@patternfly/react-core';
import CodeBranchIcon from '@patternfly/react-icons/dist/esm/icons/code-branch-icon';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { queryKeys } from '../../api/queryKeys';
import { Permission, useProjectAccess } from '../../app/permissions';
import { LazyDeleteResourceDialog as DeleteResourceDialog } from '../../components/lazyDialogs';
import { Loading } from '../../app/lazyPages';
import { ResourcePage } from '../../components/ResourcePage';
import { resourceUrl } from '../../components/useProjectResource';
import { useKeys } from '../keys/useKeys';
import { urlType } from './gitUrl';
import type { Repository } from './types';
import { useRepositories } from './useRepositories';

// The form loads when first opened.
const RepositoryDialog = lazy(async () => ({ default: (await import('./RepositoryDialog')).RepositoryDialog }));

/** /project/{id}/repositories (docs/features.md §2): every row, no paging. */
export function RepositoriesPage() {
  const { t } = useTranslation('resources');
  const { project, can } = useProjectAccess();
  const repositories = useRepositories(project.id);
  const keys = useKeys(project.id);
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState<Repository | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Repository | null>(null);
  const keyName = (id: number) => keys.data?.find((key) => key.id === id)?.name ?? '—';

  return (
    <ResourcePage<Repository>
      title={t('Repositories')}
      newLabel={t('New Repository')}
      canWrite={can(Permission.manageProjectResources)}
      list={repositories}
      columns={[
        { title: t('Name'), cell: (repo) => repo.name },
        { title: t('Git URL'), cell: (repo) => <GitUrl repository={repo} /> },
        { title: t('SSH Key'), cell: (repo) => keyName(repo.ssh_key_id) },
      ]}
      errorTitle={t('The repositories could not be loaded')}
      emptyTitle={t('No repositories yet')}
      emptyBody={t('Repositories hold the playbooks, Terraform code and scripts that templates run.')}
      onNew={() => setEditing('new')}
      onEdit={setEditing}
      onDelete={setDeleting}
    >
      <Loading>
        {editing && (
          <RepositoryDialog
            projectId={project.id}
            repository={editing === 'new' ? undefined : editing}
            keys={keys.data ?? []}
            onClose={() => setEditing(null)}
          />
        )}
        {deleting && (
          <DeleteResourceDialog
            kind="repository"
            name={deleting.name}
            path={resourceUrl(project.id, 'repositories', deleting.id)}
            onDeleted={() => void queryClient.invalidateQueries({ queryKey: queryKeys.repositories(project.id) })}
            onClose={() => setDeleting(null)}
          />
        )}
      </Loading>
    </ResourcePage>
  );
}

/** The URL, and its branch unless the URL is a local path (docs/features.md §2). */
function GitUrl({ repository }: { repository: Repository }) {
  const { t } = useTranslation('resources');
  const showBranch = urlType(repository.git_url) !== 'local' && repository.git_branch;
  return (
    <Flex spaceItems={{ default: 'spaceItemsSm' }} alignItems={{ default: 'alignItemsCenter' }}>
      <code style={{ wordBreak: 'break-all' }}>{repository.git_url}</code>
      {showBranch && (
        <Label isCompact icon={<CodeBranchIcon />} aria-label={t('Branch {{branch}}', { branch: repository.git_branch })}>
          {repository.git_branch}
        </Label>
      )}
    </Flex>
  );
}
