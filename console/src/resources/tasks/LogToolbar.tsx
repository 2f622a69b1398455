import { useEffect, useRef, useState } from 'react';
import { Button, Flex, FlexItem, SearchInput, Switch, ToggleGroup, ToggleGroupItem } from '@patternfly/react-core';
import CopyIcon from '@patternfly/react-icons/dist/esm/icons/copy-icon';
import ExclamationTriangleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-triangle-icon';
import { useTranslation } from 'react-i18next';
import type { LogMarks } from './LogView';
import { copyText, firstFailure, LogFinder, stepMatch } from './logTools';

export interface LogToolbarProps {
  /** The held lines (appended to in place) and their version. */
  lines: readonly string[];
  version: number;
  wrap: boolean;
  onWrap(wrap: boolean): void;
  /** The query and current occurrence to mark, or undefined. */
  onMarks(marks: LogMarks | undefined): void;
  /** Scroll the log to a line. */
  onGo(line: number): void;
}

// Typing pauses this long before a search starts: each key does not restart a million-line read.
const TYPING_PAUSE = 150;

/**
 * Above the task log (loaded with it, in a chunk of its own): find with a
 * count and next/previous, match case, wrap, copy the text, and go to the
 * first failure. Find reads the lines the console holds, which is the
 * whole output (the log view reads it all, docs/architecture.md).
 */
export function LogToolbar({ lines, version, wrap, onWrap, onMarks, onGo }: LogToolbarProps) {
  const { t } = useTranslation('logviewer');
  const [query, setQuery] = useState('');
  const [needle, setNeedle] = useState('');
  const [caseSensitive, setCaseSensitive] = useState(false);
  const [finder, setFinder] = useState<LogFinder>();
  const [, setProgress] = useState(0);
  const [current, setCurrent] = useState(-1);
  const [note, setNote] = useState('');

  useEffect(() => {
    const timer = setTimeout(() => setNeedle(query), TYPING_PAUSE);
    return () => clearTimeout(timer);
  }, [query]);

  // A new query (or case) starts a new search; its progress re-renders the count.
  useEffect(() => {
    setCurrent(-1);
    if (!needle) {
      setFinder(undefined);
      return;
    }
    const next = new LogFinder(lines, needle, { caseSensitive }, () => setProgress((n) => n + 1));
    setFinder(next);
    next.update();
    return () => next.cancel();
  }, [lines, needle, caseSensitive]);

  // Lines that arrive are searched too.
  useEffect(() => finder?.update(), [finder, version]);

  const count = finder?.matches.count ?? 0;
  // The first occurrence found is shown at once, as a browser's find does.
  const shown = current < 0 && count > 0 ? 0 : current;
  const go = (index: number) => {
    setCurrent(index);
    if (finder && index >= 0) onGo(finder.matches.lines[index]);
  };
  const firstShown = useRef<LogFinder>(undefined);
  useEffect(() => {
    if (!finder || count === 0 || firstShown.current === finder) return;
    firstShown.current = finder;
    go(0);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [finder, count]);

  useEffect(() => {
    if (!finder || shown < 0) onMarks(finder ? { needle: finder.needle, caseSensitive, line: -1, column: -1 } : undefined);
    else onMarks({ needle: finder.needle, caseSensitive, line: finder.matches.lines[shown], column: finder.matches.columns[shown] });
  }, [finder, shown, caseSensitive, onMarks]);

  const step = (by: 1 | -1) => go(stepMatch(count, shown, by));
  const searching = finder !== undefined && !finder.done;
  const results = !finder ? undefined : count === 0 ? (searching ? '…' : '0') : `${shown + 1} / ${count}${searching ? '…' : ''}`;

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(copyText(lines));
      setNote(t('Copied {{lines}} lines', { lines: lines.length }));
    } catch {
      setNote(t('The browser did not allow copying'));
    }
  };
  const jump = () => {
    const line = firstFailure(lines);
    if (line < 0) setNote(t('No failure found'));
    else {
      setNote(t('First failure: line {{line}}', { line: line + 1 }));
      onGo(line);
    }
  };

  return (
    <Flex className="pf-v6-u-mb-sm" alignItems={{ default: 'alignItemsCenter' }} spaceItems={{ default: 'spaceItemsSm' }} data-testid="log-toolbar">
      <FlexItem grow={{ default: 'grow' }} style={{ minWidth: 220, maxWidth: 420 }}>
        <SearchInput
          aria-label={t('Find in the log')}
          placeholder={t('Find in the log')}
          value={query}
          onChange={(_event, value) => setQuery(value)}
          onClear={() => setQuery('')}
          onKeyDown={(event) => {
            if (event.key !== 'Enter') return;
            event.preventDefault();
            // The query typed but not yet searched is searched now.
            if (query !== needle) setNeedle(query);
            else step(event.shiftKey ? -1 : 1);
          }}
          resultsCount={results}
          resultsCountContext={t('matches')}
          onNextClick={() => step(1)}
          onPreviousClick={() => step(-1)}
          isNextNavigationButtonDisabled={count === 0}
          isPreviousNavigationButtonDisabled={count === 0}
          nextNavigationButtonAriaLabel={t('Next match')}
          previousNavigationButtonAriaLabel={t('Previous match')}
          data-testid="log-find"
        />
      </FlexItem>
      <FlexItem>
        <ToggleGroup aria-label={t('Find options')}>
          <ToggleGroupItem
            text="Aa"
            aria-label={t('Match case')}
            buttonId="log-find-case"
            isSelected={caseSensitive}
            onChange={(_event, selected) => setCaseSensitive(selected)}
          />
        </ToggleGroup>
      </FlexItem>
      <FlexItem>
        <Switch id="log-wrap" label={t('Wrap lines')} isChecked={wrap} onChange={(_event, on) => onWrap(on)} />
      </FlexItem>
      <FlexItem>
        <Button variant="secondary" size="sm" icon={<CopyIcon />} onClick={() => void copy()} data-testid="log-copy">
          {t('Copy text')}
        </Button>
      </FlexItem>
      <FlexItem>
        <Button variant="secondary" size="sm" icon={<ExclamationTriangleIcon />} onClick={jump} data-testid="log-first-failure">
          {t('First failure')}
        </Button>
      </FlexItem>
      <FlexItem>
        <span role="status" className="pf-v6-u-font-size-sm" data-testid="log-note">
          {note}
        </span>
      </FlexItem>
    </Flex>
  );
}
