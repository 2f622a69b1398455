import { useTranslation } from 'react-i18next';

/** An inventory type as the list and the form name it. */
export function useInventoryTypeTitle() {
  const { t } = useTranslation('resources');
  return (type: string) =>
    ({
      static: t('Static (INI)'),
      'static-yaml': t('Static (YAML)'),
      file: t('File'),
      'terraform-workspace': t('Terraform workspace'),
    })[type] ?? type;
}
