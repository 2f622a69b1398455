import { Suspense, useState, type DragEvent } from 'react';
import { Button, EmptyState, Flex, FlexItem, FormGroup, TextInput } from '@patternfly/react-core';
import ArrowDownIcon from '@patternfly/react-icons/dist/esm/icons/arrow-down-icon';
import ArrowUpIcon from '@patternfly/react-icons/dist/esm/icons/arrow-up-icon';
import GripVerticalIcon from '@patternfly/react-icons/dist/esm/icons/grip-vertical-icon';
import PlusCircleIcon from '@patternfly/react-icons/dist/esm/icons/plus-circle-icon';
import TrashIcon from '@patternfly/react-icons/dist/esm/icons/trash-icon';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { FormDialog } from '../../components/FormDialog';
import { LazyManaged } from '../../components/lazyDialogs';
import { FieldError } from '../../components/FormFields';
import { useLazyValidation } from '../../components/useLazyValidation';
import { addView, draftOf, moveView, removeView, renameView, validateViews, type DraftView } from './reorder';
import type { View } from './types';
import { useSaveViews } from './useViews';
import './EditViewsDialog.css';

interface EditViewsDialogProps {
  projectId: number;
  views: View[];
  onClose(): void;
}

/**
 * The edit-views dialog (docs/features.md §2, §4): add, rename, delete and drag to
 * reorder the tabs of the template list. Nothing is saved until Save, which
 * creates, renames, deletes and repositions the views in one go. Move up and
 * Move down do what a drag does, for the keyboard.
 */
export function EditViewsDialog({ projectId, views, onClose }: EditViewsDialogProps) {
  const { t } = useTranslation('templates');
  const [drafts, setDrafts] = useState<DraftView[]>(() => draftOf(views));
  const [dragged, setDragged] = useState<number | null>(null);
  const [over, setOver] = useState<number | null>(null);
  const { errors, check } = useLazyValidation(drafts, validateViews);
  const save = useSaveViews(projectId);

  const onSave = () => {
    if (!check()) return;
    save.mutate({ saved: views, drafts }, { onSuccess: onClose });
  };
  const drop = (event: DragEvent, index: number) => {
    event.preventDefault();
    if (dragged !== null) setDrafts((d) => moveView(d, dragged, index));
    setDragged(null);
    setOver(null);
  };

  return (
    <FormDialog
      title={t('Edit views')}
      saveLabel={t('Save')}
      isOpen
      onClose={onClose}
      onSave={onSave}
      isSaving={save.isPending}
      error={save.error ? errorMessage(save.error) : undefined}
    >
      {drafts.length === 0 && (
        <EmptyState headingLevel="h3" titleText={t('No views')} variant="xs" />
      )}
      <ol className="bastion-views-list" aria-label={t('Views')}>
        {drafts.map((view, index) => {
          const error = errors[String(view.id)];
          const n = index + 1;
          // A view a GitOps tool manages keeps its title and place (docs/gitops.md).
          const fixed = save.isPending || !!view.managed_by;
          return (
            <li
              key={view.id}
              data-testid="view-item"
              className={over === index && dragged !== index ? 'bastion-views-item is-drop-target' : 'bastion-views-item'}
              onDragOver={(event) => {
                event.preventDefault();
                setOver(index);
              }}
              onDragLeave={() => setOver((o) => (o === index ? null : o))}
              onDrop={(event) => drop(event, index)}
            >
              <Flex alignItems={{ default: 'alignItemsFlexStart' }} flexWrap={{ default: 'nowrap' }} spaceItems={{ default: 'spaceItemsXs' }}>
                <FlexItem>
                  <span
                    className="bastion-views-handle"
                    draggable={!fixed}
                    data-testid="view-drag-handle"
                    aria-hidden
                    title={t('Drag to reorder')}
                    onDragStart={(event) => {
                      event.dataTransfer.effectAllowed = 'move';
                      event.dataTransfer.setData('text/plain', String(view.id));
                      setDragged(index);
                    }}
                    onDragEnd={() => {
                      setDragged(null);
                      setOver(null);
                    }}
                  >
                    <GripVerticalIcon />
                  </span>
                </FlexItem>
                <FlexItem grow={{ default: 'grow' }}>
                  <FormGroup fieldId={`view-title-${view.id}`}>
                    <TextInput
                      id={`view-title-${view.id}`}
                      aria-label={t('Title of view {{n}}', { n })}
                      value={view.title}
                      placeholder={t('Title')}
                      onChange={(_event, title) => setDrafts((d) => renameView(d, view.id, title))}
                      validated={error ? 'error' : 'default'}
                      isDisabled={fixed}
                      autoFocus={view.id < 0 && index === drafts.length - 1}
                    />
                    <FieldError error={error && t(error)} />
                  </FormGroup>
                  {view.managed_by && (
                    <Suspense fallback={null}>
                      <LazyManaged by={view.managed_by} part="label" />
                    </Suspense>
                  )}
                </FlexItem>
                <FlexItem>
                  <Button
                    variant="plain"
                    icon={<ArrowUpIcon />}
                    aria-label={t('Move view {{n}} up', { n })}
                    isDisabled={index === 0 || fixed}
                    onClick={() => setDrafts((d) => moveView(d, index, index - 1))}
                  />
                  <Button
                    variant="plain"
                    icon={<ArrowDownIcon />}
                    aria-label={t('Move view {{n}} down', { n })}
                    isDisabled={index === drafts.length - 1 || fixed}
                    onClick={() => setDrafts((d) => moveView(d, index, index + 1))}
                  />
                  <Button
                    variant="plain"
                    icon={<TrashIcon />}
                    aria-label={t('Delete view {{n}}', { n })}
                    isDisabled={fixed}
                    onClick={() => setDrafts((d) => removeView(d, view.id))}
                  />
                </FlexItem>
              </Flex>
            </li>
          );
        })}
      </ol>
      <div>
        <Button variant="link" icon={<PlusCircleIcon />} isInline onClick={() => setDrafts(addView)} isDisabled={save.isPending}>
          {t('Add view')}
        </Button>
      </div>
    </FormDialog>
  );
}
