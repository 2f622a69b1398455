import { useEffect, useState } from 'react';
import {
  Bullseye,
  Button,
  List,
  ListItem,
  Modal,
  ModalBody,
  ModalFooter,
  ModalHeader,
  Spinner,
  Stack,
  StackItem,
  Title,
} from '@patternfly/react-core';
import { useMutation, useQuery } from '@tanstack/react-query';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router-dom';
import { ApiError, apiDelete, apiGet } from '../api/client';
import { useNotify } from '../app/Notifications';
import { useProjectAccess } from '../app/permissions';
import { ConfirmDialog } from './ConfirmDialog';
import { blockingReferences, isBlocked, referenceLink, type References } from './references';

export interface DeleteResourceDialogProps {
  /** The kind as the messages name it: "template", "repository", "key"… */
  kind: string;
  /** The object's name, for the confirmation text. */
  name: string;
  /** /project/{id}/<kind path>/{objectId}: refs are read at path + "/refs", delete is DELETE path. */
  path: string;
  /** After a successful delete (reload the list, show a snackbar…). */
  onDeleted(): void;
  onClose(): void;
}

/**
 * Deleting any resource (docs/features.md §4, §8): first its references; if any block
 * the delete, the "Can't delete the <kind>" dialog lists them with links,
 * else a confirmation, then DELETE. Should the server still refuse (a
 * reference made meanwhile: 400 with inUse), the references are read again
 * and shown the same way.
 */
export function DeleteResourceDialog({ kind, name, path, onDeleted, onClose }: DeleteResourceDialogProps) {
  const { t } = useTranslation('resources');
  const notify = useNotify();
  const refsQuery = useQuery({
    queryKey: ['refs', path],
    queryFn: () => apiGet<References>(`${path}/refs`),
    gcTime: 0,
    staleTime: 0,
  });
  const [inUse, setInUse] = useState(false);
  const remove = useMutation({ mutationFn: () => apiDelete(path) });
  const texts = kindTexts(t, kind, name);

  const confirm = () =>
    remove.mutate(undefined, {
      onSuccess: () => {
        onDeleted();
        onClose();
      },
      onError: async (error) => {
        if (error instanceof ApiError && error.status === 400) {
          const fresh = await refsQuery.refetch();
          if (fresh.data && isBlocked(kind, fresh.data)) {
            setInUse(true);
            return;
          }
        }
        onClose();
        notify.error(error);
      },
    });

  // References that cannot be read leave nothing to decide on.
  const refsError = refsQuery.error;
  useEffect(() => {
    if (refsError) {
      notify.error(refsError);
      onClose();
    }
    // Once per failure: onClose may be a new function on every render.
  }, [refsError]);

  if (refsQuery.isError) return null;
  if (refsQuery.isPending) {
    return (
      <Modal variant="small" isOpen onClose={onClose} aria-label={t('Loading')}>
        <ModalBody>
          <Bullseye>
            <Spinner aria-label={t('Loading')} />
          </Bullseye>
        </ModalBody>
      </Modal>
    );
  }
  if (inUse || isBlocked(kind, refsQuery.data)) {
    return <CannotDeleteDialog title={texts.cannot} refs={refsQuery.data} kind={kind} onClose={onClose} />;
  }
  return (
    <ConfirmDialog title={texts.title} confirmLabel={t('Delete')} isOpen isBusy={remove.isPending} onConfirm={confirm} onClose={onClose}>
      {texts.question}
    </ConfirmDialog>
  );
}

function CannotDeleteDialog({ title, refs, kind, onClose }: { title: string; refs: References; kind: string; onClose(): void }) {
  const { t } = useTranslation('resources');
  const { project } = useProjectAccess();
  const groups = blockingReferences(kind, refs);
  const groupTitles: Record<keyof References, string> = {
    templates: t('Templates'),
    inventories: t('Inventories'),
    repositories: t('Repositories'),
    schedules: t('Schedules'),
    integrations: t('Integrations'),
  };
  return (
    <Modal variant="small" isOpen onClose={onClose} aria-labelledby="cannot-delete-title">
      <ModalHeader title={title} labelId="cannot-delete-title" titleIconVariant="danger" />
      <ModalBody>
        <Stack hasGutter>
          <StackItem>{t('It is used by the resources below. Change or delete them first.')}</StackItem>
          {(Object.keys(groups) as (keyof References)[]).map((group) => (
            <StackItem key={group}>
              <Title headingLevel="h3" size="md">
                {groupTitles[group]}
              </Title>
              <List aria-label={groupTitles[group]}>
                {groups[group]!.map((item) => {
                  const link = referenceLink(project.id, group, item);
                  return <ListItem key={item.id}>{link ? <Link to={link} onClick={onClose}>{item.name}</Link> : item.name}</ListItem>;
                })}
              </List>
            </StackItem>
          ))}
        </Stack>
      </ModalBody>
      <ModalFooter>
        <Button variant="primary" onClick={onClose}>
          {t('Close')}
        </Button>
      </ModalFooter>
    </Modal>
  );
}

// Whole sentences per kind, so that each language can inflect the kind.
function kindTexts(t: TFunction<'resources'>, kind: string, name: string) {
  switch (kind) {
    case 'template':
      return {
        cannot: t("Can't delete the template"),
        title: t('Delete template'),
        question: t('Are you sure you want to delete the template "{{name}}"?', { name }),
      };
    case 'repository':
      return {
        cannot: t("Can't delete the repository"),
        title: t('Delete repository'),
        question: t('Are you sure you want to delete the repository "{{name}}"?', { name }),
      };
    case 'key':
      return {
        cannot: t("Can't delete the key"),
        title: t('Delete key'),
        question: t('Are you sure you want to delete the key "{{name}}"?', { name }),
      };
    case 'inventory':
      return {
        cannot: t("Can't delete the inventory"),
        title: t('Delete inventory'),
        question: t('Are you sure you want to delete the inventory "{{name}}"?', { name }),
      };
    case 'environment':
      return {
        cannot: t("Can't delete the environment"),
        title: t('Delete environment'),
        question: t('Are you sure you want to delete the environment "{{name}}"?', { name }),
      };
    default:
      return {
        cannot: t("Can't delete the {{kind}}", { kind }),
        title: t('Delete {{name}}', { name }),
        question: t('Are you sure you want to delete "{{name}}"?', { name }),
      };
  }
}
