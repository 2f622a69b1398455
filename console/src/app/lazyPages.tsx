// Screens that load when first opened, so the first page carries only what
// it shows (the bundle budget: docs/benchmarks.md). Each is a named export,
// hence the small adapters.
import { lazy, Suspense, type ComponentType, type ReactNode } from 'react';
import { Bullseye, Spinner } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import type { RestoreProjectDialogProps } from '../resources/projects/RestoreProjectDialog';
import type { Member } from '../resources/team/useTeam';
import type { User } from '../resources/users/types';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- T names the props at each use.
function named<T extends ComponentType<any>>(load: () => Promise<Record<string, unknown>>, name: string) {
  return lazy(async () => ({ default: (await load())[name] as T }));
}

export const LoginPage = named(() => import('../resources/auth/LoginPage'), 'LoginPage');
export const SignedInApp = named(() => import('./SignedInApp'), 'SignedInApp');
export const ProjectPages = named(() => import('./ProjectArea'), 'ProjectPages');
export const NewProjectPage = named(() => import('./ProjectArea'), 'NewProjectPage');
export const UsersPage = named(() => import('../resources/users/UsersPage'), 'UsersPage');
export const TeamPage = named(() => import('../resources/team/TeamPage'), 'TeamPage');
export const ActivityPage = named(() => import('../resources/events/ActivityPage'), 'ActivityPage');
export const ProjectSettingsPage = named(() => import('../resources/projects/ProjectSettingsPage'), 'ProjectSettingsPage');
export const HistoryPage = named(() => import('../resources/tasks/HistoryPage'), 'HistoryPage');
export const TemplateRoutes = named(() => import('../resources/templates/TemplateRoutes'), 'TemplateRoutes');
export const TaskLogHost = named(() => import('../resources/tasks/TaskLogHost'), 'TaskLogHost');
export const KeysPage = named(() => import('../resources/keys/KeysPage'), 'KeysPage');
export const RepositoriesPage = named(() => import('../resources/repositories/RepositoriesPage'), 'RepositoriesPage');
export const InventoriesPage = named(() => import('../resources/inventories/InventoriesPage'), 'InventoriesPage');
export const EnvironmentsPage = named(() => import('../resources/environments/EnvironmentsPage'), 'EnvironmentsPage');
export const IntegrationsPage = named(() => import('../resources/integrations/IntegrationsPage'), 'IntegrationsPage');
export const IntegrationPage = named(() => import('../resources/integrations/IntegrationPage'), 'IntegrationPage');

// Dialogs load when first opened: they bring the modal, its focus trap and,
// for restore, a file upload library, which pages that only list things
// need not carry.
export const RestoreProjectDialog = named<ComponentType<RestoreProjectDialogProps>>(
  () => import('../resources/projects/RestoreProjectDialog'),
  'RestoreProjectDialog',
);
export const AccountDialog = named<ComponentType<{ onClose(): void }>>(
  () => import('../resources/users/AccountDialog'),
  'AccountDialog',
);
export const ChangePasswordDialog = named<ComponentType<{ user: User; onClose(): void }>>(
  () => import('../resources/users/ChangePasswordDialog'),
  'ChangePasswordDialog',
);
export const TeamMemberDialog = named<ComponentType<{ projectId: number; members: Member[]; onClose(): void }>>(
  () => import('../resources/team/TeamMemberDialog'),
  'TeamMemberDialog',
);
export const RemoveMemberDialog = named<ComponentType<{ member: Member; onClose(): void }>>(
  () => import('../resources/team/TeamDialogs'),
  'RemoveMemberDialog',
);
export const LeaveProjectDialog = named<ComponentType<{ onClose(): void }>>(
  () => import('../resources/team/TeamDialogs'),
  'LeaveProjectDialog',
);

/** A spinner while a screen's code loads. */
export function Loading({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  return (
    <Suspense
      fallback={
        <Bullseye style={{ minHeight: '50vh' }}>
          <Spinner aria-label={t('Loading')} />
        </Bullseye>
      }
    >
      {children}
    </Suspense>
  );
}
