import { useTranslation } from 'react-i18next';
import { CheckboxField } from '../../components/FormFields';

interface RequireApprovalFieldProps {
  checked: boolean;
  onChange(checked: boolean): void;
}

/**
 * The template editor's "Require approval" switch. Its words live in the
 * approvals namespace, loaded with the (lazy) editor, so the template
 * screen's first load carries none of them.
 */
export function RequireApprovalField({ checked, onChange }: RequireApprovalFieldProps) {
  const { t } = useTranslation('approvals');
  return (
    <CheckboxField
      id="template-require-approval"
      label={t('Require approval')}
      description={t('Each task waits until a project owner other than the one who started it approves it.')}
      checked={checked}
      onChange={onChange}
    />
  );
}
