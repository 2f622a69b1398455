import { useEffect, useRef, useState, type ButtonHTMLAttributes } from 'react';
import i18n from 'i18next';
import { useTranslation } from 'react-i18next';
import type { LogMarks } from './LogView';
import { copyText, firstFailure, LogFinder, stepMatch } from './logTools';
import './LogToolbar.css';

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
  /** The indexes of the lines on stderr. */
  stderr: ReadonlySet<number>;
  /** The task runs ansible (its failed tasks are the failures), not another program. */
  ansible: boolean;
  /** "First failure" is offered: the task did not succeed. */
  failed: boolean;
  /** Receives the words a screen reader says before a stderr line, in the toolbar's language. */
  onStderrLabel(label: string): void;
}

// The toolbar's words come with it, not through the entry's list of
// catalogs (src/i18n/index.ts leaves this namespace out).
const NAMESPACE = 'logviewer';
const ownCatalogs = import.meta.glob<Record<string, string>>(['../../locales/*/logviewer.json', '!../../locales/en/logviewer.json'], {
  import: 'default',
});

/** Adds the words of the current language if not there yet (English's are its keys, never loaded). */
export async function loadWords(lng = i18n.language): Promise<void> {
  const load = lng === 'en' ? undefined : ownCatalogs[`../../locales/${lng}/${NAMESPACE}.json`];
  if (load && !i18n.hasResourceBundle(lng, NAMESPACE)) i18n.addResourceBundle(lng, NAMESPACE, await load(), true, true);
}

// Typing pauses this long before a search starts: each key does not restart a million-line read.
const TYPING_PAUSE = 150;

/**
 * Above the task log (loaded with it, in a chunk of its own): find with a
 * count and next/previous, match case, wrap, copy the text, and go to the
 * first failure. Find reads the lines the console holds, which is the
 * whole output (the log view reads it all, docs/architecture.md).
 */
export function LogToolbar({ lines, version, wrap, onWrap, onMarks, onGo, stderr, ansible, failed, onStderrLabel }: LogToolbarProps) {
  const { t } = useTranslation('logviewer');
  useWordsOnLanguageChange();
  useEffect(() => onStderrLabel(t('Standard error')), [t, onStderrLabel]);
  const [query, setQuery] = useState('');
  const [needle, setNeedle] = useState('');
  const [caseSensitive, setCaseSensitive] = useState(false);
  const [finder, setFinder] = useState<LogFinder>();
  const [, setProgress] = useState(0);
  const [current, setCurrent] = useState(-1);
  const [note, setNote] = useState('');
  const goTo = useRef(onGo);
  goTo.current = onGo;

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
    // The first occurrence is shown as soon as it is found, as a browser's
    // find does; here, not in an effect, which could run after the user's
    // first step and undo it.
    let shownFirst = false;
    const next = new LogFinder(lines, needle, { caseSensitive }, () => {
      setProgress((n) => n + 1);
      if (shownFirst || next.matches.count === 0) return;
      shownFirst = true;
      goTo.current(next.matches.lines[0]);
    });
    setFinder(next);
    next.update();
    return () => next.cancel();
  }, [lines, needle, caseSensitive]);

  // Lines that arrive are searched too.
  useEffect(() => finder?.update(), [finder, version]);

  const count = finder?.matches.count ?? 0;
  // Until the user steps, the current occurrence is the first.
  const shown = current < 0 && count > 0 ? 0 : current;
  const go = (index: number) => {
    setCurrent(index);
    if (finder && index >= 0) onGo(finder.matches.lines[index]);
  };

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
    const line = firstFailure(lines, stderr, ansible);
    if (line < 0) setNote(t('No failure found'));
    else {
      setNote(t('First failure: line {{line}}', { line: line + 1 }));
      onGo(line);
    }
  };

  return (
    // Plain elements in PatternFly's classes: importing PatternFly components
    // here split its shared chunks and added 0.4 KB to the template screen's
    // first load, which has no room for it.
    <div className="task-log-toolbar" data-testid="log-toolbar">
      <div className="task-log-toolbar__find">
        <input
          type="search"
          className="task-log-toolbar__input"
          aria-label={t('Find in the log')}
          placeholder={t('Find in the log')}
          value={query}
          onChange={(event) => setQuery(event.target.value)}
          onKeyDown={(event) => {
            if (event.key !== 'Enter') return;
            event.preventDefault();
            // The query typed but not yet searched is searched now.
            if (query !== needle) setNeedle(query);
            else step(event.shiftKey ? -1 : 1);
          }}
          data-testid="log-find"
        />
      </div>
      <div>
        <span className="pf-v6-u-font-size-sm" aria-live="polite" data-testid="log-find-count">
          {results !== undefined && t('{{results}} matches', { results })}
        </span>
      </div>
      <div>
        <ToolButton plain aria-label={t('Previous match')} disabled={count === 0} onClick={() => step(-1)}>
          ↑
        </ToolButton>
        <ToolButton plain aria-label={t('Next match')} disabled={count === 0} onClick={() => step(1)}>
          ↓
        </ToolButton>
        <ToolButton
          plain
          aria-label={t('Match case')}
          aria-pressed={caseSensitive}
         
          onClick={() => setCaseSensitive(!caseSensitive)}
          data-testid="log-find-case"
        >
          Aa
        </ToolButton>
      </div>
      <div>
        <ToolButton aria-pressed={wrap} onClick={() => onWrap(!wrap)} data-testid="log-wrap">
          {t('Wrap lines')}
        </ToolButton>
      </div>
      <div>
        <ToolButton onClick={() => void copy()} data-testid="log-copy">
          {t('Copy text')}
        </ToolButton>
      </div>
      {failed && (
        <div>
          <ToolButton onClick={jump} data-testid="log-first-failure">
            {t('First failure')}
          </ToolButton>
        </div>
      )}
      <div>
        <span role="status" className="pf-v6-u-font-size-sm" data-testid="log-note">
          {note}
        </span>
      </div>
    </div>
  );
}

/** A language chosen while the toolbar is open: its words load, and the toolbar shows them. */
function useWordsOnLanguageChange() {
  const [, setLoaded] = useState(0);
  useEffect(() => {
    const onChange = (lng: string) => void loadWords(lng).then(() => setLoaded((n) => n + 1));
    i18n.on('languageChanged', onChange);
    return () => i18n.off('languageChanged', onChange);
  }, []);
}

/** PatternFly's small secondary (or plain) button, in its classes; pressed when aria-pressed is true. */
function ToolButton({ plain = false, children, ...props }: ButtonHTMLAttributes<HTMLButtonElement> & { plain?: boolean }) {
  const pressed = props['aria-pressed'] === true;
  return (
    <button
      type="button"
      className={`pf-v6-c-button pf-m-small ${plain ? 'pf-m-plain' : 'pf-m-secondary'}${pressed ? ' pf-m-clicked' : ''}${props.disabled ? ' pf-m-disabled' : ''}`}
      {...props}
    >
      <span className="pf-v6-c-button__text">{children}</span>
    </button>
  );
}
