import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Loading } from '../../app/lazyPages';
import { DeleteItemDialog } from './DeleteItemDialog';
import { ItemTable } from './ItemTable';
import { ExtractValueDialog, MatcherDialog } from './lazyDialogs';
import { bodyDataTypes, labelOf, matchMethods, sources } from './labels';
import type { ExtractValue, Matcher } from './types';
import { useIntegrationItems } from './useIntegrationItems';
import { useProjectAccess } from '../../app/permissions';

interface ItemsSectionProps {
  integrationId: number;
  /** Who manages the integration: its items are read-only then. */
  managedBy?: string;
}

/** The extracted values table (docs/features.md §2): name, value source, body data type, key, environment variable. */
export function ExtractValuesSection({ integrationId, managedBy }: ItemsSectionProps) {
  const { t } = useTranslation('integrations');
  const { project } = useProjectAccess();
  const values = useIntegrationItems(project.id, integrationId, 'values');
  const [editing, setEditing] = useState<ExtractValue | null | undefined>(undefined);
  const [deleting, setDeleting] = useState<ExtractValue | null>(null);
  return (
    <>
      <ItemTable<ExtractValue>
        title={t('Extracted values')}
        newLabel={t('New Extracted Value')}
        emptyText={t('No extracted values: the task gets no variables from the request.')}
        items={values.data}
        error={values.error}
        onNew={() => setEditing(null)}
        onEdit={setEditing}
        onDelete={setDeleting}
        managedBy={managedBy}
        columns={[
          { title: t('Name'), cell: (v) => v.name },
          { title: t('Value source'), cell: (v) => t(labelOf(sources, v.value_source)) },
          { title: t('Body data type'), cell: (v) => (v.body_data_type ? t(labelOf(bodyDataTypes, v.body_data_type)) : t('N/A')) },
          { title: t('Key'), cell: (v) => <code>{v.key}</code>, code: true },
          { title: t('Environment variable'), cell: (v) => <code>{v.variable}</code>, code: true },
        ]}
      />
      <Loading>
        {editing !== undefined && (
          <ExtractValueDialog integrationId={integrationId} value={editing ?? undefined} onClose={() => setEditing(undefined)} />
        )}
      </Loading>
      {deleting && <DeleteItemDialog integrationId={integrationId} kind="values" item={deleting} onClose={() => setDeleting(null)} />}
    </>
  );
}

/** The matchers table (docs/features.md §2): name, match type, method, body data type (N/A when empty), key, value. */
export function MatchersSection({ integrationId, managedBy }: ItemsSectionProps) {
  const { t } = useTranslation('integrations');
  const { project } = useProjectAccess();
  const matchers = useIntegrationItems(project.id, integrationId, 'matchers');
  const [editing, setEditing] = useState<Matcher | null | undefined>(undefined);
  const [deleting, setDeleting] = useState<Matcher | null>(null);
  return (
    <>
      <ItemTable<Matcher>
        title={t('Matchers')}
        newLabel={t('New Matcher')}
        emptyText={t('No matchers: every authentic request starts a task.')}
        items={matchers.data}
        error={matchers.error}
        onNew={() => setEditing(null)}
        onEdit={setEditing}
        onDelete={setDeleting}
        managedBy={managedBy}
        columns={[
          { title: t('Name'), cell: (m) => m.name },
          { title: t('Match type'), cell: (m) => t(labelOf(sources, m.match_type)) },
          { title: t('Method'), cell: (m) => t(labelOf(matchMethods, m.method)) },
          { title: t('Body data type'), cell: (m) => (m.body_data_type ? t(labelOf(bodyDataTypes, m.body_data_type)) : t('N/A')) },
          { title: t('Key'), cell: (m) => <code>{m.key}</code>, code: true },
          { title: t('Value'), cell: (m) => <code>{m.value}</code>, code: true },
        ]}
      />
      <Loading>
        {editing !== undefined && <MatcherDialog integrationId={integrationId} matcher={editing ?? undefined} onClose={() => setEditing(undefined)} />}
      </Loading>
      {deleting && <DeleteItemDialog integrationId={integrationId} kind="matchers" item={deleting} onClose={() => setDeleting(null)} />}
    </>
  );
}
