import type { ReactNode } from 'react';
import { Bullseye, Button, Content, Flex, Spinner, Title } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useTranslation } from 'react-i18next';
import './integrations.css';
import { errorMessage } from '../../api/errors';
import { RowActions } from '../../components/RowActions';

export interface ItemColumn<T> {
  title: string;
  cell(item: T): ReactNode;
  /** Code (keys, values, variables) may break anywhere; words only between words. */
  code?: boolean;
}

interface ItemTableProps<T extends { id: number; name: string }> {
  /** The section's heading, also the table's label. */
  title: string;
  newLabel: string;
  emptyText: string;
  columns: ItemColumn<T>[];
  items: T[] | undefined;
  error: unknown;
  onNew(): void;
  onEdit(item: T): void;
  onDelete(item: T): void;
  /** Who manages the integration (its managed_by): no New, and the rows' actions disabled. */
  managedBy?: string;
}

/**
 * The detail's extracted values and matchers (docs/features.md §2): a heading with its
 * New button, then a table of every item with edit and delete. Every
 * member may change these (docs/features.md §6), so the buttons are always there,
 * unless a GitOps tool manages the integration (docs/gitops.md): the items are
 * in its spec, so they are as read-only as it is.
 */
export function ItemTable<T extends { id: number; name: string }>(props: ItemTableProps<T>) {
  const { t } = useTranslation('integrations');
  const { title, newLabel, emptyText, columns, items, error } = props;
  return (
    <section aria-label={title} className="bastion-integrations__section">
      <Flex justifyContent={{ default: 'justifyContentSpaceBetween' }} alignItems={{ default: 'alignItemsCenter' }} className="bastion-integrations__heading">
        <Title headingLevel="h2" size="lg">
          {title}
        </Title>
        {!props.managedBy && (
          <Button variant="secondary" onClick={props.onNew}>
            {newLabel}
          </Button>
        )}
      </Flex>
      {error ? (
        <Content component="p" className="bastion-integrations__danger" role="alert">
          {errorMessage(error)}
        </Content>
      ) : items === undefined ? (
        <Bullseye>
          <Spinner size="lg" aria-label={t('Loading')} />
        </Bullseye>
      ) : items.length === 0 ? (
        <Content component="p" className="bastion-integrations__muted">
          {emptyText}
        </Content>
      ) : (
        <Table aria-label={title} variant="compact">
          <Thead>
            <Tr>
              {columns.map((c) => (
                <Th key={c.title} modifier="wrap">
                  {c.title}
                </Th>
              ))}
              <Th screenReaderText={t('Actions')} />
            </Tr>
          </Thead>
          <Tbody>
            {items.map((item) => (
              <Tr key={item.id}>
                {columns.map((c) => (
                  <Td key={c.title} dataLabel={c.title} modifier={c.code ? 'breakWord' : 'wrap'}>
                    {c.cell(item)}
                  </Td>
                ))}
                <Td isActionCell>
                  <Flex flexWrap={{ default: 'nowrap' }} gap={{ default: 'gapNone' }} justifyContent={{ default: 'justifyContentFlexEnd' }}>
                    <RowActions
                      name={item.name}
                      labels={[t('Edit {{name}}', { name: item.name }), t('Delete {{name}}', { name: item.name })]}
                      managedBy={props.managedBy}
                      onEdit={() => props.onEdit(item)}
                      onDelete={() => props.onDelete(item)}
                    />
                  </Flex>
                </Td>
              </Tr>
            ))}
          </Tbody>
        </Table>
      )}
    </section>
  );
}
