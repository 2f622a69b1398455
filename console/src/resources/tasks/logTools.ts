// The log toolbar's work over the held lines (docs/features.md, "Beyond the
// anchors"): find, the first failure, and the text to copy. Pure functions
// and one class, loaded with the toolbar (LogToolbar.tsx), never with the
// log itself.
import { plainText } from './ansi';

/**
 * Lines searched between two yields to the browser. At about 20 ns a line
 * (docs/benchmarks.md, "Find in the task log") a slice stays well under a
 * frame, so typing and scrolling stay smooth while a million lines are read.
 */
export const SLICE = 20_000;

export interface FindOptions {
  caseSensitive: boolean;
}

/** Where a query occurs: parallel arrays, one entry per occurrence, in log order. */
export interface Matches {
  count: number;
  /** Line index of each occurrence. */
  lines: Int32Array;
  /** Column (in the shown text) of each occurrence. */
  columns: Int32Array;
}

/** Appends every occurrence of needle in the lines [from, to) to matches (growing its arrays). */
export function findIn(lines: readonly string[], from: number, to: number, needle: string, options: FindOptions, matches: Matches): void {
  if (!needle) return;
  const folded = options.caseSensitive ? needle : needle.toLowerCase();
  for (let i = from; i < to; i++) {
    let text = plainText(lines[i]);
    if (!options.caseSensitive) text = text.toLowerCase();
    for (let at = text.indexOf(folded); at >= 0; at = text.indexOf(folded, at + folded.length)) {
      if (matches.count === matches.lines.length) grow(matches);
      matches.lines[matches.count] = i;
      matches.columns[matches.count] = at;
      matches.count++;
    }
  }
}

function grow(matches: Matches): void {
  const size = Math.max(1024, matches.lines.length * 2);
  const lines = new Int32Array(size);
  const columns = new Int32Array(size);
  lines.set(matches.lines);
  columns.set(matches.columns);
  matches.lines = lines;
  matches.columns = columns;
}

export const noMatches = (): Matches => ({ count: 0, lines: new Int32Array(0), columns: new Int32Array(0) });

/** Runs a slice of work later, letting the browser paint and take input first. */
export type Yield = (next: () => void) => void;
const macrotask: Yield = (next) => void setTimeout(next, 0);

/**
 * A search over a log that may still grow: it reads the held lines a slice
 * at a time, and on update() reads only the lines that arrived since, so a
 * live log's count stays current without reading it all again.
 */
export class LogFinder {
  matches: Matches = noMatches();
  /** Lines read so far: searching is done when this reaches the log's length. */
  searched = 0;
  private running = false;
  private cancelled = false;

  constructor(
    private readonly lines: readonly string[],
    readonly needle: string,
    private readonly options: FindOptions,
    private readonly onProgress: () => void,
    private readonly later: Yield = macrotask,
  ) {}

  get done(): boolean {
    return this.searched >= this.lines.length;
  }

  /** Reads the lines not yet read, a slice per task; calls onProgress after each slice. */
  update(): void {
    if (this.running || this.cancelled || this.done) return;
    this.running = true;
    const step = () => {
      if (this.cancelled) return;
      const to = Math.min(this.lines.length, this.searched + SLICE);
      findIn(this.lines, this.searched, to, this.needle, this.options, this.matches);
      this.searched = to;
      this.onProgress();
      if (this.done) this.running = false;
      else this.later(step);
    };
    step();
  }

  /** Stops reading: a new query replaces this one. */
  cancel(): void {
    this.cancelled = true;
  }
}

/** The next (step 1) or previous (step -1) occurrence after current, wrapping around; -1 if none. */
export function stepMatch(count: number, current: number, step: 1 | -1): number {
  if (count === 0) return -1;
  if (current < 0) return step === 1 ? 0 : count - 1;
  return (current + step + count) % count;
}

/** The first occurrence at or after line (wrapping to the first): where a new search starts. */
export function firstMatchFrom(matches: Matches, line: number): number {
  if (matches.count === 0) return -1;
  let lo = 0;
  let hi = matches.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (matches.lines[mid] < line) lo = mid + 1;
    else hi = mid;
  }
  return lo < matches.count ? lo : 0;
}

// Ansible's default callback reports a failed task, or a failed loop item,
// as "fatal: [host]: FAILED! => …", "fatal: [host]: UNREACHABLE! => …" or
// "failed: [host] (item=…) => …"; ignore_errors prints "...ignoring" on
// the next line, and such a failure is not one. "ERROR! …" is
// ansible-playbook refusing to start (a syntax error, a missing file).
const ANSIBLE_FAILURE = /^(?:fatal|failed): \[[^\]]*\]/;
const ANSIBLE_ERROR = /^ERROR! /;
const IGNORED = /^\.\.\.ignoring\s*$/;
// Other programs (shell, Python, Go, Terraform): the usual error lines,
// the fallback when no line was on stderr (a program that prints its errors
// on stdout; a task run before the runner told the streams apart).
const PROGRAM_ERROR = [
  /^(?:error|fatal|panic)\b\s*[:!]/i, // "Error: …", "fatal: not a git repository", "panic: …"
  /^Traceback \(most recent call last\):/, // Python
  /^[^:\s]+: line \d+: /, // bash: "script.sh: line 3: nope: command not found"
  /^│ Error: /, // Terraform's boxed diagnostics
];

/**
 * Where "First failure" goes (docs/features.md, "Beyond the anchors"): in
 * an ansible task's log, the first failed task that was not ignored (or
 * ansible refusing to start), else the first line on stderr; in any other
 * program's, the first line on stderr, else the first error-shaped line.
 * -1 if none.
 */
export function firstFailure(lines: readonly string[], stderr: ReadonlySet<number>, ansible: boolean): number {
  const failed = ansible ? firstAnsibleFailure(lines) : -1;
  if (failed >= 0) return failed;
  let first = -1;
  for (const line of stderr) if (first < 0 || line < first) first = line;
  return first >= 0 || ansible ? first : firstErrorLine(lines);
}

/** The first ansible failure that was not ignored; -1 if none. */
function firstAnsibleFailure(lines: readonly string[]): number {
  for (let i = 0; i < lines.length; i++) {
    const text = plainText(lines[i]).trimStart();
    if (ANSIBLE_ERROR.test(text)) return i;
    if (ANSIBLE_FAILURE.test(text) && !IGNORED.test(plainText(lines[i + 1] ?? '').trim())) return i;
  }
  return -1;
}

/** The first line shaped like a program's error; -1 if none. */
function firstErrorLine(lines: readonly string[]): number {
  for (let i = 0; i < lines.length; i++) {
    const text = plainText(lines[i]).trimStart();
    if (PROGRAM_ERROR.some((pattern) => pattern.test(text))) return i;
  }
  return -1;
}

/** The log as text, without escapes and without timestamps (the lines carry none): what Copy puts on the clipboard. */
export function copyText(lines: readonly string[]): string {
  const out = new Array<string>(lines.length);
  for (let i = 0; i < lines.length; i++) out[i] = plainText(lines[i]);
  return out.length ? `${out.join('\n')}\n` : '';
}
