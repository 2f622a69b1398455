import { Fragment, memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { Button } from '@patternfly/react-core';
import ArrowDownIcon from '@patternfly/react-icons/dist/esm/icons/arrow-down-icon';
import { useTranslation } from 'react-i18next';
import { parseAnsi, plainText } from './ansi';
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
  /** Long lines wrap at the pane's width instead of scrolling sideways. */
  wrap?: boolean;
  /** The find bar's query and current occurrence, marked in the rows. */
  marks?: LogMarks;
  /** A line to scroll to (a third of the way down); a new object scrolls again. */
  target?: { line: number };
  /** Above the pane: the toolbar. */
  toolbar?: ReactNode;
  /** The indexes of the lines on stderr, marked with a rule and, for screen readers, stderrLabel. */
  stderr?: ReadonlySet<number>;
  stderrLabel?: string;
}

/**
 * Where lines sit, in rows of LINE_HEIGHT: one row a line, or, with wrap
 * on, as many as the line takes at the pane's width (rowOf(count) is the
 * total). lineAt(row) is the line that row belongs to.
 */
export interface RowLayout {
  rowOf(line: number): number;
  lineAt(row: number): number;
}

export const oneRowEach: RowLayout = { rowOf: (line) => line, lineAt: (row) => row };

/**
 * With wrap on: rows per line from its shown length in columns (the font is
 * monospace and the rows break anywhere, so the count is exact for
 * single-width text), summed as lines arrive.
 */
export class WrapLayout implements RowLayout {
  private starts = new Int32Array(1024);
  private count = 0;
  constructor(readonly columns: number) {}

  /** Takes in the lines that arrived since the last call. */
  extend(lines: readonly string[]): void {
    if (lines.length + 1 > this.starts.length) {
      const starts = new Int32Array(Math.max(lines.length + 1, this.starts.length * 2));
      starts.set(this.starts);
      this.starts = starts;
    }
    for (let i = this.count; i < lines.length; i++) {
      this.starts[i + 1] = this.starts[i] + Math.max(1, Math.ceil(shownLength(lines[i]) / this.columns));
    }
    this.count = lines.length;
  }

  rowOf(line: number): number {
    return this.starts[Math.min(line, this.count)];
  }

  lineAt(row: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.starts[mid] <= row) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

// A tab takes up to eight columns: counted as eight, a line errs long, never short.
function shownLength(line: string): number {
  const text = plainText(line);
  let tabs = 0;
  for (let at = text.indexOf('\t'); at >= 0; at = text.indexOf('\t', at + 1)) tabs++;
  return text.length + tabs * 7;
}

/** Which lines to render for a scroll position: a window of rows, whatever the log's length. */
export function visibleWindow(count: number, scrollTop: number, viewport: number, layout: RowLayout = oneRowEach) {
  const total = layout.rowOf(count) * LINE_HEIGHT;
  const scrollHeight = Math.min(total, MAX_SCROLL_HEIGHT);
  const maxScroll = Math.max(0, scrollHeight - viewport);
  const ratio = maxScroll > 0 ? Math.max(0, total - viewport) / maxScroll : 1;
  const contentTop = Math.min(scrollTop, maxScroll) * ratio;
  const first = Math.max(0, layout.lineAt(Math.floor(contentTop / LINE_HEIGHT)) - OVERSCAN);
  const last = Math.min(count, layout.lineAt(Math.ceil((contentTop + viewport) / LINE_HEIGHT)) + 1 + OVERSCAN);
  // Rows sit in the spacer where the scroll position shows them.
  const offset = Math.min(scrollTop, maxScroll) - contentTop;
  return { first, last, scrollHeight, offset, ratio };
}

/** The scroll position that shows line a third of the way down the viewport (the inverse of visibleWindow). */
export function scrollTopFor(line: number, count: number, viewport: number, layout: RowLayout = oneRowEach): number {
  const { ratio } = visibleWindow(count, 0, viewport, layout);
  return Math.max(0, (layout.rowOf(line) * LINE_HEIGHT - viewport / 3) / ratio);
}

/** Marks every occurrence of needle in text (case folded unless caseSensitive); current is the column of the one to stand out. */
function marked(text: string, needle: string, caseSensitive: boolean, from: number, current: number): ReactNode {
  const hay = caseSensitive ? text : text.toLowerCase();
  const folded = caseSensitive ? needle : needle.toLowerCase();
  const parts: ReactNode[] = [];
  let done = 0;
  for (let at = hay.indexOf(folded); at >= 0; at = hay.indexOf(folded, at + folded.length)) {
    if (at > done) parts.push(text.slice(done, at));
    const end = at + folded.length;
    parts.push(
      <mark key={at} className={from + at === current ? 'task-log__match task-log__match--current' : 'task-log__match'}>
        {text.slice(at, end)}
      </mark>,
    );
    done = end;
  }
  if (!parts.length) return text;
  if (done < text.length) parts.push(text.slice(done));
  return parts;
}

/** What the find bar asks the log to show: the query's occurrences, and the current one. */
export interface LogMarks {
  needle: string;
  caseSensitive: boolean;
  /** The current occurrence: its line, and its column in the shown text. */
  line: number;
  column: number;
}

interface LogLineProps {
  line: string;
  index: number;
  top: number;
  digits: number;
  /** Rows this line takes (wrap on), or undefined (one row, scrolling sideways). */
  rows?: number;
  marks?: LogMarks;
  /** On a stderr line: what a screen reader says before it (the rule shows it). */
  stderr?: string;
}

const LogLine = memo(function LogLine({ line, index, top, digits, rows, marks, stderr }: LogLineProps) {
  const current = marks && marks.line === index ? marks.column : -1;
  let column = 0;
  const text = parseAnsi(line).map((segment, i) => {
    const from = column;
    column += segment.text.length;
    const body = marks?.needle ? marked(segment.text, marks.needle, marks.caseSensitive, from, current) : segment.text;
    return segment.className || segment.style ? (
      <span key={i} className={segment.className} style={segment.style}>
        {body}
      </span>
    ) : (
      <Fragment key={i}>{body}</Fragment>
    );
  });
  const wrapped = rows !== undefined;
  return (
    <div
      className={`task-log__row${wrapped ? ' task-log__row--wrap' : ''}${current >= 0 ? ' task-log__row--current' : ''}${stderr === undefined ? '' : ' task-log__row--stderr'}`}
      style={{ top, height: wrapped ? rows * LINE_HEIGHT : undefined }}
      data-line={index + 1}
      data-stream={stderr === undefined ? undefined : 'stderr'}
    >
      <span className="task-log__num" style={{ width: `${digits + 2}ch` }} aria-hidden>
        {index + 1}
      </span>
      {stderr && <span className="pf-v6-screen-reader task-log__stream">{stderr} </span>}
      {wrapped ? <span className="task-log__text">{text}</span> : text}
    </div>
  );
});

/**
 * The task output, virtualised: only the rows in view (and a margin) are in
 * the page, so a million lines open and scroll as fast as ten. It follows
 * the end while lines arrive, unless the user has scrolled up; scrolling
 * back to the end follows again.
 */
export function LogView({ lines, version, label, empty, wrap = false, marks, target, toolbar, stderr, stderrLabel = '' }: LogViewProps) {
  const { t } = useTranslation('tasks');
  const ref = useRef<HTMLDivElement>(null);
  const probe = useRef<HTMLSpanElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(560);
  const [width, setWidth] = useState(800);
  const [follow, setFollow] = useState(true);
  // Where the view last scrolled itself: a scroll event at or below it is
  // that scroll (or lines arriving), not the user going up.
  const autoTop = useRef(0);
  const following = useRef(follow);
  following.current = follow;
  const count = lines.length;
  // The line numbers' column fits the largest of them.
  const digits = Math.max(4, String(count).length);
  const columns = wrap ? wrapColumns(width, probe.current?.offsetWidth, digits) : 0;
  const wrapLayout = useMemo(() => (columns ? new WrapLayout(columns) : undefined), [columns]);
  wrapLayout?.extend(lines);
  const layout = wrapLayout ?? oneRowEach;
  const { first, last, scrollHeight, offset } = visibleWindow(count, scrollTop, viewport, layout);

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => {
      setViewport(el.clientHeight || 560);
      setWidth(el.clientWidth || 800);
    };
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
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
  }, [follow, version, count, viewport, layout]);

  // Go to a line the toolbar asked for (a match, the first failure): the
  // view stops following so it stays there.
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || !target) return;
    setFollow(false);
    following.current = false;
    el.scrollTop = scrollTopFor(target.line, count, el.clientHeight || viewport, layout);
    setScrollTop(el.scrollTop);
    // Only a new target scrolls: lines arriving leave the view where it is.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [target, layout]);

  // Once its row is drawn, the page shows it too: in a dialog shorter than
  // the pane (a laptop, a phone), the row may lie below the dialog's fold.
  // Once, for each target: a user scrolling afterwards is left alone.
  const revealed = useRef<{ line: number }>(undefined);
  useEffect(() => {
    if (!target || revealed.current === target) return;
    const row = ref.current?.querySelector(`[data-line="${target.line + 1}"]`);
    if (!row) return;
    revealed.current = target;
    row.scrollIntoView?.({ block: 'nearest' });
  }, [target, scrollTop]);

  const onScroll = useCallback(() => {
    const el = ref.current;
    if (!el) return;
    setScrollTop(el.scrollTop);
    if (el.scrollTop + el.clientHeight >= el.scrollHeight - LINE_HEIGHT / 2) setFollow(true);
    else if (!following.current || el.scrollTop < autoTop.current - 1) setFollow(false);
  }, []);

  const rows = [];
  for (let i = first; i < last; i++) {
    const lineMarks = marks && (marks.line === i || marks.needle) ? marks : undefined;
    rows.push(
      <LogLine
        key={i}
        line={lines[i]}
        index={i}
        top={layout.rowOf(i) * LINE_HEIGHT + offset}
        digits={digits}
        rows={wrapLayout ? layout.rowOf(i + 1) - layout.rowOf(i) : undefined}
        marks={lineMarks}
        stderr={stderr?.has(i) ? stderrLabel : undefined}
      />,
    );
  }
  return (
    <div style={{ position: 'relative' }}>
      {toolbar}
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
        data-wrap={wrap}
      >
        <span ref={probe} className="task-log__probe" aria-hidden>
          {'0'.repeat(10)}
        </span>
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

/**
 * Columns of text a wrapped row holds: the pane's width less the line
 * number's column and the row's right padding, in characters (the probe is
 * ten of them; 7.8 px each where nothing is laid out).
 */
function wrapColumns(width: number, probeWidth: number | undefined, digits: number): number {
  const char = probeWidth ? probeWidth / 10 : 7.8;
  return Math.max(10, Math.floor((width - 16 - 1) / char) - (digits + 3));
}
