import { memo, useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { Button } from '@patternfly/react-core';
import ArrowDownIcon from '@patternfly/react-icons/dist/esm/icons/arrow-down-icon';
import { useTranslation } from 'react-i18next';
import { parseAnsi } from './ansi';
import './LogView.css';

/** Every line is this tall (px, LogView.css), so any line's place is known without measuring. */
export const LINE_HEIGHT = 20;
/** Rows rendered above and below the visible ones, so a fast scroll shows no gap. */
const OVERSCAN = 30;
/**
 * Browsers cap an element's height (Firefox near 17.9 million px): a taller
 * log scrolls a spacer of this height, and positions map onto lines in
 * proportion.
 */
export const MAX_SCROLL_HEIGHT = 10_000_000;

export interface LogViewProps {
  /** The lines, appended to in place; version says when they changed. */
  lines: readonly string[];
  version: number;
  label: string;
  /** Shown when there are no lines. */
  empty?: string;
}

/** Which lines to render for a scroll position: a window of rows, whatever the log's length. */
export function visibleWindow(count: number, scrollTop: number, viewport: number) {
  const total = count * LINE_HEIGHT;
  const scrollHeight = Math.min(total, MAX_SCROLL_HEIGHT);
  const maxScroll = Math.max(0, scrollHeight - viewport);
  const ratio = maxScroll > 0 ? Math.max(0, total - viewport) / maxScroll : 1;
  const contentTop = Math.min(scrollTop, maxScroll) * ratio;
  const first = Math.max(0, Math.floor(contentTop / LINE_HEIGHT) - OVERSCAN);
  const last = Math.min(count, Math.ceil((contentTop + viewport) / LINE_HEIGHT) + OVERSCAN);
  // Rows sit in the spacer where the scroll position shows them.
  const offset = Math.min(scrollTop, maxScroll) - contentTop;
  return { first, last, scrollHeight, offset };
}

const LogLine = memo(function LogLine({ line, index, top, digits }: { line: string; index: number; top: number; digits: number }) {
  return (
    <div className="task-log__row" style={{ top }} data-line={index + 1}>
      <span className="task-log__num" style={{ width: `${digits + 2}ch` }} aria-hidden>
        {index + 1}
      </span>
      {parseAnsi(line).map((segment, i) =>
        segment.className || segment.style ? (
          <span key={i} className={segment.className} style={segment.style}>
            {segment.text}
          </span>
        ) : (
          segment.text
        ),
      )}
    </div>
  );
});

/**
 * The task output, virtualised: only the rows in view (and a margin) are in
 * the page, so a million lines open and scroll as fast as ten. It follows
 * the end while lines arrive, unless the user has scrolled up; scrolling
 * back to the end follows again.
 */
export function LogView({ lines, version, label, empty }: LogViewProps) {
  const { t } = useTranslation('tasks');
  const ref = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(560);
  const [follow, setFollow] = useState(true);
  // Where the view last scrolled itself: a scroll event at or below it is
  // that scroll (or lines arriving), not the user going up.
  const autoTop = useRef(0);
  const following = useRef(follow);
  following.current = follow;
  const count = lines.length;
  const { first, last, scrollHeight, offset } = visibleWindow(count, scrollTop, viewport);

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    setViewport(el.clientHeight || 560);
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => setViewport(el.clientHeight || 560));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  // Follow the end: after every change of the lines, before paint.
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || !follow) return;
    el.scrollTop = el.scrollHeight;
    autoTop.current = el.scrollTop;
    setScrollTop(el.scrollTop);
  }, [follow, version, count, viewport]);

  const onScroll = useCallback(() => {
    const el = ref.current;
    if (!el) return;
    setScrollTop(el.scrollTop);
    if (el.scrollTop + el.clientHeight >= el.scrollHeight - LINE_HEIGHT / 2) setFollow(true);
    else if (!following.current || el.scrollTop < autoTop.current - 1) setFollow(false);
  }, []);

  // The line numbers' column fits the largest of them.
  const digits = Math.max(4, String(count).length);
  const rows = [];
  for (let i = first; i < last; i++) {
    rows.push(<LogLine key={i} line={lines[i]} index={i} top={i * LINE_HEIGHT + offset} digits={digits} />);
  }
  return (
    <div style={{ position: 'relative' }}>
      <div
        ref={ref}
        className="task-log"
        role="log"
        aria-live="off"
        aria-label={label}
        tabIndex={0}
        onScroll={onScroll}
        data-testid="task-log"
        data-lines={count}
        data-following={follow}
      >
        {count === 0 ? (
          <div className="task-log__empty">{empty}</div>
        ) : (
          <div className="task-log__spacer" style={{ height: scrollHeight }}>
            {rows}
          </div>
        )}
      </div>
      {!follow && count > 0 && (
        <Button
          variant="secondary"
          size="sm"
          icon={<ArrowDownIcon />}
          onClick={() => setFollow(true)}
          style={{ position: 'absolute', right: 24, bottom: 12 }}
        >
          {t('Follow the output')}
        </Button>
      )}
    </div>
  );
}
