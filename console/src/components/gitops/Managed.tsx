// What an object that a GitOps tool manages shows instead of its edit and
// delete actions (docs/gitops.md): who manages it, and actions that stay
// disabled, saying why. A chunk of its own with its own words ("gitops"),
// loaded only when a screen has such an object.
import type { ReactNode } from 'react';
import { Alert, Button, Label, Tooltip } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';

export interface ManagedProps {
  /** Who manages the object: an answer's managed_by ("Flux"). */
  by: string;
  /** The object's name, for the actions' accessible names. */
  name?: string;
  /** label: "Managed by X"; notice: the same with why, for a form;
   * icons: disabled edit and delete, as a row's; buttons: the label and
   * those, as a screen's header. */
  part: 'label' | 'notice' | 'icons' | 'buttons';
  /** The row's edit and delete icons, for icons (the row's chunk has
   * them: not loading them again keeps the screens' first load smaller). */
  icons?: [edit: ReactNode, remove: ReactNode];
}

export default function Managed({ by, name = '', part, icons }: ManagedProps) {
  const { t } = useTranslation('gitops');
  const why = t('Read-only here: {{by}} keeps it in step with its source, and would undo an edit. Change it there.', { by });
  const label = t('Managed by {{by}}', { by });
  if (part === 'notice') {
    return (
      <Alert variant="info" isInline isPlain title={label} className="pf-v6-u-mb-md">
        {why}
      </Alert>
    );
  }
  const badge = (
    <Tooltip content={why}>
      <Label isCompact color="purple" tabIndex={0} className="pf-v6-u-ml-sm">
        {label}
      </Label>
    </Tooltip>
  );
  if (part === 'label') return badge;
  const edit = t('Edit {{name}}', { name });
  const remove = t('Delete {{name}}', { name });
  // isAriaDisabled, not isDisabled: a disabled button gets no hover, and
  // the tooltip is the point.
  return (
    <>
      {part === 'buttons' && badge}
      <Tooltip content={why}>
        {part === 'icons' ? (
          <Button variant="plain" icon={icons?.[0]} aria-label={edit} isAriaDisabled />
        ) : (
          <Button variant="secondary" size="sm" isAriaDisabled>
            {t('Edit')}
          </Button>
        )}
      </Tooltip>
      <Tooltip content={why}>
        {part === 'icons' ? (
          <Button variant="plain" icon={icons?.[1]} aria-label={remove} isAriaDisabled />
        ) : (
          <Button variant="secondary" size="sm" isDanger isAriaDisabled>
            {t('Delete')}
          </Button>
        )}
      </Tooltip>
    </>
  );
}
