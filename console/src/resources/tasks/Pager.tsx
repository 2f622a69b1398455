import { Button, Flex, FlexItem } from '@patternfly/react-core';
import AngleLeftIcon from '@patternfly/react-icons/dist/esm/icons/angle-left-icon';
import AngleRightIcon from '@patternfly/react-icons/dist/esm/icons/angle-right-icon';
import { useTranslation } from 'react-i18next';

interface PagerProps {
  total: number;
  perPage: number;
  page: number;
  onPage(page: number): void;
  label: string;
}

/** The page of a list (1-based), kept within its pages as the list shrinks. */
export function pageWithin(page: number, total: number, perPage: number): number {
  return Math.min(Math.max(1, page), Math.max(1, Math.ceil(total / perPage)));
}

/**
 * "21 - 40 of 45" with previous and next: dashboards have one page size
 * (docs/features.md §9: 20), so PatternFly's Pagination and its per-page menu (11 KB
 * gzip on the first load) would offer nothing more.
 */
export function Pager({ total, perPage, page, onPage, label }: PagerProps) {
  const { t } = useTranslation('tasks');
  const pages = Math.max(1, Math.ceil(total / perPage));
  const first = total === 0 ? 0 : (page - 1) * perPage + 1;
  const last = Math.min(total, page * perPage);
  return (
    <Flex component="nav" aria-label={label} justifyContent={{ default: 'justifyContentFlexEnd' }} alignItems={{ default: 'alignItemsCenter' }} className="pf-v6-u-mb-sm">
      <FlexItem className="pf-v6-u-font-size-sm">{t('{{first}} - {{last}} of {{total}}', { first, last, total })}</FlexItem>
      <FlexItem spacer={{ default: 'spacerNone' }}>
        <Button variant="plain" icon={<AngleLeftIcon />} aria-label={t('Go to previous page')} isDisabled={page <= 1} onClick={() => onPage(page - 1)} />
        <Button variant="plain" icon={<AngleRightIcon />} aria-label={t('Go to next page')} isDisabled={page >= pages} onClick={() => onPage(page + 1)} />
      </FlexItem>
    </Flex>
  );
}
