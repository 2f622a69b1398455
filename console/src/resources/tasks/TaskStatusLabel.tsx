import { Label } from '@patternfly/react-core';
import BanIcon from '@patternfly/react-icons/dist/esm/icons/ban-icon';
import CheckCircleIcon from '@patternfly/react-icons/dist/esm/icons/check-circle-icon';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import HandPaperIcon from '@patternfly/react-icons/dist/esm/icons/hand-paper-icon';
import HourglassHalfIcon from '@patternfly/react-icons/dist/esm/icons/hourglass-half-icon';
import InProgressIcon from '@patternfly/react-icons/dist/esm/icons/in-progress-icon';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { knownStatus, statusColor } from './status';
import type { TaskStatus } from './types';

/** A status in words (docs/features.md §4: error reads Failed; an unknown status is an error). */
export function statusText(status: TaskStatus, t: TFunction<'tasks'>): string {
  switch (knownStatus(status)) {
    case 'waiting':
      return t('Waiting');
    case 'starting':
      return t('Starting');
    case 'waiting_confirmation':
      return t('Waiting confirmation');
    case 'confirmed':
      return t('Confirmed');
    case 'running':
      return t('Running');
    case 'success':
      return t('Success');
    case 'error':
      return t('Failed');
    case 'stopping':
      return t('Stopping');
    case 'stopped':
      return t('Stopped');
  }
}

function statusIcon(status: TaskStatus) {
  switch (knownStatus(status)) {
    case 'success':
      return <CheckCircleIcon />;
    case 'error':
      return <ExclamationCircleIcon />;
    case 'running':
    case 'starting':
    case 'confirmed':
      return <InProgressIcon />;
    case 'waiting_confirmation':
      return <HandPaperIcon />;
    case 'stopping':
    case 'stopped':
      return <BanIcon />;
    case 'waiting':
      return <HourglassHalfIcon />;
  }
}

/** A task's status as a coloured label; error reads Failed. */
export function TaskStatusLabel({ status }: { status: TaskStatus }) {
  const { t } = useTranslation('tasks');
  return (
    <Label color={statusColor(status)} icon={statusIcon(status)} isCompact data-testid="task-status" data-status={knownStatus(status)}>
      {statusText(status, t)}
    </Label>
  );
}
