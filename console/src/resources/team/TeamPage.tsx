import { useState } from 'react';
import {
  Bullseye,
  Button,
  EmptyState,
  EmptyStateBody,
  Flex,
  FormSelect,
  FormSelectOption,
  PageSection,
  Spinner,
  Title,
} from '@patternfly/react-core';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import TrashIcon from '@patternfly/react-icons/dist/esm/icons/trash-icon';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { useNotify } from '../../app/Notifications';
import { Permission, useProjectAccess } from '../../app/permissions';
import { roles, roleTitle } from './roles';
import { LeaveProjectDialog, Loading, RemoveMemberDialog, TeamMemberDialog } from '../../app/lazyPages';
import { useChangeRole, useTeam, type Member } from './useTeam';

/** Sorted by name ascending (docs/features.md §2), whatever order the server used. */
function byName(members: Member[]): Member[] {
  return [...members].sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }));
}

/** /project/{id}/team (docs/features.md §2). */
export function TeamPage() {
  const { t } = useTranslation('team');
  const { project, role, can } = useProjectAccess();
  const team = useTeam(project.id);
  const manage = can(Permission.manageProjectUsers);
  const [linking, setLinking] = useState(false);
  const [removing, setRemoving] = useState<Member | null>(null);
  const [leaving, setLeaving] = useState(false);
  const members = byName(team.data ?? []);

  return (
    <PageSection>
      <Title headingLevel="h1">{t('Team')}</Title>
      <Flex className="pf-v6-u-my-md">
        {manage && (
          <Button variant="primary" onClick={() => setLinking(true)}>
            {t('New Team Member')}
          </Button>
        )}
        {/* An admin who is not a member has nothing to leave. */}
        {role !== '' && (
          <Button variant="secondary" isDanger isDisabled={role === 'owner'} onClick={() => setLeaving(true)}>
            {t('Leave Project')}
          </Button>
        )}
      </Flex>
      {team.isPending && (
        <Bullseye>
          <Spinner aria-label={t('Loading')} />
        </Bullseye>
      )}
      {team.isError && (
        <EmptyState headingLevel="h2" titleText={t('The team could not be loaded')} icon={ExclamationCircleIcon} status="danger">
          <EmptyStateBody>{errorMessage(team.error)}</EmptyStateBody>
        </EmptyState>
      )}
      {team.data && (
        <Table aria-label={t('Team')} variant="compact">
          <Thead>
            <Tr>
              <Th>{t('Name')}</Th>
              <Th>{t('Username')}</Th>
              <Th>{t('Role')}</Th>
              <Th screenReaderText={t('Actions')} />
            </Tr>
          </Thead>
          <Tbody>
            {members.map((member) => (
              <Tr key={member.id}>
                <Td dataLabel={t('Name')}>{member.name}</Td>
                <Td dataLabel={t('Username')}>{member.username}</Td>
                <Td dataLabel={t('Role')}>
                  {manage ? <RoleSelect member={member} /> : t(roleTitle(member.role))}
                </Td>
                <Td isActionCell>
                  {manage && (
                    <Button
                      variant="plain"
                      icon={<TrashIcon />}
                      aria-label={t('Remove {{name}}', { name: member.username })}
                      onClick={() => setRemoving(member)}
                    />
                  )}
                </Td>
              </Tr>
            ))}
          </Tbody>
        </Table>
      )}
      <Loading>
        {linking && <TeamMemberDialog projectId={project.id} members={members} onClose={() => setLinking(false)} />}
        {removing && <RemoveMemberDialog member={removing} onClose={() => setRemoving(null)} />}
        {leaving && <LeaveProjectDialog onClose={() => setLeaving(false)} />}
      </Loading>
    </PageSection>
  );
}

/** A role change saves at once and reloads the team (docs/features.md §4). */
function RoleSelect({ member }: { member: Member }) {
  const { t } = useTranslation('team');
  const { project } = useProjectAccess();
  const notify = useNotify();
  const change = useChangeRole(project.id);
  return (
    <FormSelect
      value={member.role}
      onChange={(_event, role) => change.mutate({ member, role }, { onError: notify.error })}
      isDisabled={change.isPending}
      aria-label={t('Role of {{name}}', { name: member.username })}
      style={{ maxWidth: '14rem' }}
    >
      {roles.map((role) => (
        <FormSelectOption key={role.slug} value={role.slug} label={t(role.title)} />
      ))}
    </FormSelect>
  );
}
