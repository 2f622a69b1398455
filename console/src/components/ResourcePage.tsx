// The frame of the project resource screens (keys, repositories, inventory,
// environment): a title, the New button for those who may write (docs/features.md §6),
// the list's states (docs/features.md §4: a spinner while loading, the derived message
// on failure, a helpful empty state) and a table of every row, no paging.
import type { ReactNode } from 'react';
import {
  Bullseye,
  Button,
  EmptyState,
  EmptyStateBody,
  Flex,
  PageSection,
  Spinner,
  Title,
} from '@patternfly/react-core';
import CubesIcon from '@patternfly/react-icons/dist/esm/icons/cubes-icon';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import type { UseQueryResult } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../api/errors';
import { ManagedName, RowActions } from './RowActions';

/** A row: managed_by is set when a GitOps tool manages it (read-only). */
interface Item {
  id: number;
  name: string;
  managed_by?: string;
}

export interface Column<T> {
  title: string;
  cell(item: T): ReactNode;
}

interface ResourcePageProps<T extends Item> {
  title: string;
  newLabel: string;
  /** Whether the user may create, edit and delete (manageProjectResources). */
  canWrite: boolean;
  list: UseQueryResult<T[]>;
  columns: Column<T>[];
  errorTitle: string;
  emptyTitle: string;
  emptyBody: string;
  onNew(): void;
  onEdit(item: T): void;
  onDelete(item: T): void;
  /** The dialogs the page opens. */
  children?: ReactNode;
}

export function ResourcePage<T extends Item>(props: ResourcePageProps<T>) {
  const { t } = useTranslation('resources');
  const { title, newLabel, canWrite, list, onNew, children } = props;
  return (
    <PageSection>
      <Title headingLevel="h1">{title}</Title>
      {canWrite && (
        <Flex className="pf-v6-u-my-md">
          <Button variant="primary" onClick={onNew}>
            {newLabel}
          </Button>
        </Flex>
      )}
      {list.isPending && (
        <Bullseye>
          <Spinner aria-label={t('Loading')} />
        </Bullseye>
      )}
      {list.isError && (
        <EmptyState headingLevel="h2" titleText={props.errorTitle} icon={ExclamationCircleIcon} status="danger">
          <EmptyStateBody>{errorMessage(list.error)}</EmptyStateBody>
        </EmptyState>
      )}
      {list.data && list.data.length === 0 && (
        <EmptyState headingLevel="h2" titleText={props.emptyTitle} icon={CubesIcon}>
          <EmptyStateBody>{props.emptyBody}</EmptyStateBody>
        </EmptyState>
      )}
      {list.data && list.data.length > 0 && <ResourceTable {...props} items={list.data} />}
      {children}
    </PageSection>
  );
}

function ResourceTable<T extends Item>({
  title,
  columns,
  canWrite,
  items,
  onEdit,
  onDelete,
}: ResourcePageProps<T> & { items: T[] }) {
  const { t } = useTranslation('resources');
  return (
    <Table aria-label={title} variant="compact">
      <Thead>
        <Tr>
          {columns.map((column) => (
            <Th key={column.title}>{column.title}</Th>
          ))}
          {canWrite && <Th screenReaderText={t('Actions')} />}
        </Tr>
      </Thead>
      <Tbody>
        {items.map((item) => (
          <Tr key={item.id}>
            {columns.map((column, i) => (
              <Td key={column.title} dataLabel={column.title}>
                {i === 0 ? <ManagedName managedBy={item.managed_by}>{column.cell(item)}</ManagedName> : column.cell(item)}
              </Td>
            ))}
            {canWrite && (
              <Td isActionCell>
                <Flex flexWrap={{ default: 'nowrap' }} spaceItems={{ default: 'spaceItemsNone' }} justifyContent={{ default: 'justifyContentFlexEnd' }}>
                  <RowActions
                    name={item.name}
                    labels={[t('Edit {{name}}', { name: item.name }), t('Delete {{name}}', { name: item.name })]}
                    managedBy={item.managed_by}
                    onEdit={() => onEdit(item)}
                    onDelete={() => onDelete(item)}
                  />
                </Flex>
              </Td>
            )}
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}
