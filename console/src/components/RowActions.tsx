// A row's edit and delete icons, shared by the resource screens, the
// integrations and an integration's matchers and values: disabled, saying
// why, when a GitOps tool manages the row's object (docs/gitops.md). A
// module of its own, so that the integrations' screens do not load the
// resource screens' words.
import { Suspense, type ReactNode } from 'react';
import { Button } from '@patternfly/react-core';
import PencilAltIcon from '@patternfly/react-icons/dist/esm/icons/pencil-alt-icon';
import TrashIcon from '@patternfly/react-icons/dist/esm/icons/trash-icon';
import { LazyManaged } from './lazyDialogs';

interface RowActionsProps {
  /** The object's name, for the disabled icons' accessible names. */
  name: string;
  /** The icons' accessible names, "Edit {{name}}" and "Delete {{name}}" in
   * the caller's words (its namespace is loaded; this module reads none). */
  labels: [edit: string, remove: string];
  /** Who manages it (an answer's managed_by); the icons are disabled then. */
  managedBy?: string;
  onEdit(): void;
  onDelete(): void;
}

export function RowActions({ name, labels, managedBy, onEdit, onDelete }: RowActionsProps) {
  if (managedBy) {
    return (
      <Suspense fallback={null}>
        <LazyManaged by={managedBy} name={name} part="icons" icons={[<PencilAltIcon key="edit" />, <TrashIcon key="delete" />]} />
      </Suspense>
    );
  }
  return (
    <>
      <Button variant="plain" icon={<PencilAltIcon />} aria-label={labels[0]} onClick={onEdit} />
      <Button variant="plain" icon={<TrashIcon />} aria-label={labels[1]} onClick={onDelete} />
    </>
  );
}

/** A name with "Managed by X" after it when a GitOps tool manages it: one
 * piece, as a phone's row shows each cell's content as one grid item. */
export function ManagedName({ children, managedBy }: { children: ReactNode; managedBy?: string }) {
  if (!managedBy) return <>{children}</>;
  return (
    <span>
      {children}
      <Suspense fallback={null}>
        <LazyManaged by={managedBy} part="label" />
      </Suspense>
    </span>
  );
}
