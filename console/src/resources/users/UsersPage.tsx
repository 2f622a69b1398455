import { useState } from 'react';
import {
  Bullseye,
  Button,
  EmptyState,
  EmptyStateBody,
  Flex,
  FlexItem,
  MenuToggle,
  PageSection,
  Pagination,
  Spinner,
  Title,
} from '@patternfly/react-core';
import ArrowLeftIcon from '@patternfly/react-icons/dist/esm/icons/arrow-left-icon';
import CheckIcon from '@patternfly/react-icons/dist/esm/icons/check-icon';
import EllipsisVIcon from '@patternfly/react-icons/dist/esm/icons/ellipsis-v-icon';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import { ActionsColumn, Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useTranslation } from 'react-i18next';
import { Navigate, useNavigate } from 'react-router-dom';
import { errorMessage } from '../../api/errors';
import { useNotify } from '../../app/Notifications';
import { PlainFrame } from '../../app/PlainFrame';
import { useSession } from '../../app/SessionContext';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ManagedName } from '../../components/RowActions';
import { lastProject } from '../../settings/settings';
import { ChangePasswordDialog } from './ChangePasswordDialog';
import type { User } from './types';
import { UserDialog } from './UserDialog';
import { useDeleteUser, useUsers } from './useUsers';

/** Users page size (docs/features.md §9). */
export const USERS_PER_PAGE = 20;

type Dialog = { kind: 'new' } | { kind: 'edit' | 'password' | 'delete'; user: User };

/** /users (docs/features.md §2): global user administration, for admins only. */
export function UsersPage() {
  const { user } = useSession();
  if (!user.admin) return <Navigate to="/" replace />;
  return (
    <PlainFrame>
      <UserAdministration />
    </PlainFrame>
  );
}

function Check({ on, label }: { on: boolean; label: string }) {
  return on ? <CheckIcon title={label} /> : null;
}

function UserAdministration() {
  const { t } = useTranslation('users');
  const { user: me } = useSession();
  const users = useUsers();
  const notify = useNotify();
  const navigate = useNavigate();
  const remove = useDeleteUser();
  const [page, setPage] = useState(1);
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const back = lastProject();
  const rows = users.data ?? [];
  const shown = rows.slice((page - 1) * USERS_PER_PAGE, page * USERS_PER_PAGE);

  const confirmDelete = (user: User) =>
    remove.mutate(user, {
      onSuccess: () => {
        notify.success(t('User {{name}} deleted', { name: user.username }));
        setDialog(null);
      },
      onError: (error) => {
        setDialog(null);
        notify.error(error);
      },
    });

  return (
    <PageSection>
      <Flex alignItems={{ default: 'alignItemsCenter' }} className="pf-v6-u-mb-md">
        <FlexItem>
          <Button
            variant="plain"
            onClick={() => navigate(back ? `/project/${back}` : '/')}
            aria-label={t('Back to the project')}
            icon={<ArrowLeftIcon />}
          />
        </FlexItem>
        <FlexItem>
          <Title headingLevel="h1">{t('Users')}</Title>
        </FlexItem>
      </Flex>
      {/* A Flex rather than PatternFly's Toolbar: the same row, at a tenth of the CSS. */}
      <Flex justifyContent={{ default: 'justifyContentSpaceBetween' }} alignItems={{ default: 'alignItemsCenter' }} className="pf-v6-u-mb-sm">
        <Button variant="primary" onClick={() => setDialog({ kind: 'new' })}>
          {t('New user')}
        </Button>
        <Pagination
          itemCount={rows.length}
          perPage={USERS_PER_PAGE}
          perPageOptions={[{ title: String(USERS_PER_PAGE), value: USERS_PER_PAGE }]}
          page={page}
          onSetPage={(_event, next) => setPage(next)}
          isCompact
        />
      </Flex>
      {users.isPending && (
        <Bullseye>
          <Spinner aria-label={t('Loading')} />
        </Bullseye>
      )}
      {users.isError && (
        <EmptyState headingLevel="h2" titleText={t('The users could not be loaded')} icon={ExclamationCircleIcon} status="danger">
          <EmptyStateBody>{errorMessage(users.error)}</EmptyStateBody>
        </EmptyState>
      )}
      {users.data && (
        <Table aria-label={t('Users')} variant="compact">
          <Thead>
            <Tr>
              <Th>{t('Name')}</Th>
              <Th>{t('Username')}</Th>
              <Th>{t('Email')}</Th>
              <Th>{t('Alert')}</Th>
              <Th>{t('Admin')}</Th>
              <Th>{t('External')}</Th>
              <Th screenReaderText={t('Actions')} />
            </Tr>
          </Thead>
          <Tbody>
            {shown.map((user) => (
              <Tr key={user.id}>
                <Td dataLabel={t('Name')}><ManagedName managedBy={user.managed_by}>{user.name}</ManagedName></Td>
                <Td dataLabel={t('Username')}>{user.username}</Td>
                <Td dataLabel={t('Email')}>{user.email}</Td>
                <Td dataLabel={t('Alert')}><Check on={user.alert} label={t('Alert')} /></Td>
                <Td dataLabel={t('Admin')}><Check on={user.admin} label={t('Admin')} /></Td>
                <Td dataLabel={t('External')}><Check on={user.external} label={t('External')} /></Td>
                <Td isActionCell>
                  <ActionsColumn
                    popperProps={{ position: 'end' }}
                    actionsToggle={({ onToggle, isOpen, isDisabled, toggleRef }) => (
                      <MenuToggle
                        ref={toggleRef}
                        onClick={onToggle}
                        isExpanded={isOpen}
                        isDisabled={isDisabled}
                        variant="plain"
                        icon={<EllipsisVIcon />}
                        aria-label={t('Actions for {{name}}', { name: user.username })}
                      />
                    )}
                    items={[
                      // A user declared in Git is changed there; the API
                      // refuses its edit and delete, not its password
                      // (docs/gitops.md, "What the guard covers").
                      { title: t('Edit'), isDisabled: !!user.managed_by, onClick: () => setDialog({ kind: 'edit', user }) },
                      ...(user.external ? [] : [{ title: t('Change password'), onClick: () => setDialog({ kind: 'password', user }) }]),
                      { isSeparator: true },
                      // You cannot delete your own row (docs/features.md §6).
                      { title: t('Delete'), isDanger: true, isDisabled: user.id === me.id || !!user.managed_by, onClick: () => setDialog({ kind: 'delete', user }) },
                    ]}
                  />
                </Td>
              </Tr>
            ))}
          </Tbody>
        </Table>
      )}
      {dialog?.kind === 'new' && <UserDialog onClose={() => setDialog(null)} />}
      {dialog?.kind === 'edit' && <UserDialog user={dialog.user} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'password' && <ChangePasswordDialog user={dialog.user} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'delete' && (
        <ConfirmDialog
          title={t('Delete user')}
          confirmLabel={t('Delete')}
          isOpen
          isBusy={remove.isPending}
          onConfirm={() => confirmDelete(dialog.user)}
          onClose={() => setDialog(null)}
        >
          {t('Are you sure you want to delete the user {{name}}?', { name: dialog.user.username })}
        </ConfirmDialog>
      )}
    </PageSection>
  );
}
