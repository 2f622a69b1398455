// A task's output lines as the log view reads them. One object per task
// lives in the react-query cache (keys.output); the socket appends to it in
// place (api/live.ts), so a million lines are never copied per new line,
// and the view re-renders at most once per animation frame.
import type { LiveLog, LogLine } from '../../api/live';

/** The server's largest page of GET …/tasks/{id}/output?offset=&limit= (apiserver/task_output.go). */
export const OUTPUT_PAGE = 10000;

export type FetchLines = (offset: number, limit: number) => Promise<LogLine[]>;

/** GET …/tasks/{id}/stderr: the numbers (1 is the first) of the lines on stderr, which the text stream does not carry. */
export type FetchStderr = () => Promise<number[]>;

/**
 * Streams the whole output as text (GET …/tasks/{id}/raw), handing over
 * the lines as they arrive: a long log's first read, with no JSON to write
 * or parse on either side.
 */
export type StreamLines = (onLines: (lines: string[]) => void) => Promise<void>;

/**
 * Each read through the pages starts this many lines before the end of
 * what is held: their times let a live line that repeats one of them be
 * recognised (see isRepeat).
 */
export const REREAD = 1000;

export type OutputState = 'loading' | 'ready' | 'error';

// Lines compare by time at millisecond precision: the store and the socket
// may write the same instant with different precision and zone.
function millis(time: string): number {
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? 0 : ms;
}

// The times of this many last lines read are kept, to recognise a live
// line that the read already returned (the runner sends at most 1,000
// lines at a time, so a run of such lines is shorter than this).
const TAIL = OUTPUT_PAGE;

export class TaskOutput implements LiveLog {
  /** The lines, in order, as the runner wrote them. */
  readonly lines: string[] = [];
  /** The indexes of the lines the task's program wrote to its stderr. */
  readonly stderr = new Set<number>();
  state: OutputState = 'loading';
  error: unknown;
  /** Times (ms) of the last lines read from the server, from line tailStart on. */
  private tailMs: number[] = [];
  private tailStart = 0;
  /**
   * After a read, live lines may repeat its last lines (written before the
   * read, sent after it): while overlap is set, a live line equal to the
   * next expected read line is dropped. cursor is that line's index.
   */
  private overlap?: { cursor?: number; end: number };
  private syncing = false;
  private missed = false;
  private version = 0;
  private frame = 0;
  private readonly listeners = new Set<() => void>();
  private streamed = false;

  constructor(
    private readonly fetchLines: FetchLines,
    private readonly schedule: (notify: () => void) => void = (notify) => requestAnimationFrame(notify),
    private readonly streamLines?: StreamLines,
    private readonly fetchStderr?: FetchStderr,
  ) {}

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Changes with every appended batch: the view's snapshot. */
  getVersion = (): number => this.version;

  /**
   * A live line (the socket's "log"). While the lines are being read from
   * the server it is left to that read, which is told to read once more.
   */
  append(line: LogLine): void {
    if (this.syncing) {
      this.missed = true;
      return;
    }
    if (this.isRepeat(line)) return;
    this.push(line);
    this.changed();
  }

  /** Reads the lines the output lacks (after a reconnect). */
  resync(): void {
    void this.sync();
  }

  /**
   * Reads from the server every line after the ones held, a page at a
   * time, showing each page as it arrives; reads again if live lines
   * arrived meanwhile, so none is lost.
   */
  async sync(): Promise<void> {
    if (this.syncing) {
      this.missed = true;
      return;
    }
    this.syncing = true;
    try {
      if (this.streamLines && !this.streamed && this.lines.length === 0) {
        this.streamed = true;
        await this.streamLines((lines) => {
          for (const line of lines) this.lines.push(line);
          this.state = 'ready';
          this.changed();
        });
        // The marks only: a server that cannot say (an older replica
        // during an upgrade) leaves the log whole and unmarked.
        const seqs = await this.fetchStderr?.().catch(() => undefined);
        for (const seq of seqs ?? []) this.stderr.add(seq - 1);
      }
      do {
        this.missed = false;
        let offset = Math.max(0, this.lines.length - REREAD);
        for (;;) {
          const page = await this.fetchLines(offset, OUTPUT_PAGE);
          this.keepTail(page, offset);
          // The page's first lines may be held already (the re-read ones).
          for (let i = this.lines.length - offset; i < page.length; i++) this.push(page[i]);
          offset += page.length;
          this.state = 'ready';
          this.changed();
          if (page.length < OUTPUT_PAGE) break;
        }
      } while (this.missed);
      this.overlap = { end: this.lines.length };
    } catch (error) {
      if (this.state === 'loading') this.state = 'error';
      this.error = error;
      this.changed();
    } finally {
      this.syncing = false;
    }
  }

  private push(line: LogLine): void {
    if (line.stream) this.stderr.add(this.lines.length);
    this.lines.push(line.output);
  }

  /** Keeps the times of the lines read, the page starting at line start. */
  private keepTail(page: LogLine[], start: number): void {
    if (page.length === 0) return;
    const contiguous = start === this.tailStart + this.tailMs.length;
    const times = (contiguous ? this.tailMs : []).concat(page.map((line) => millis(line.time)));
    const drop = Math.max(0, times.length - TAIL);
    this.tailMs = drop ? times.slice(drop) : times;
    this.tailStart = start + page.length - this.tailMs.length;
  }

  /** Whether a live line is one the last read already returned. */
  private isRepeat(line: LogLine): boolean {
    const overlap = this.overlap;
    if (!overlap) return false;
    let at = overlap.cursor;
    if (at === undefined) {
      // The first live line after a read: find it among the read lines of
      // its millisecond.
      const ms = millis(line.time);
      at = -1;
      for (let i = Math.max(this.tailStart, 0); i < overlap.end; i++) {
        const t = this.tailMs[i - this.tailStart];
        if (t > ms) break;
        if (t === ms && this.lines[i] === line.output) {
          at = i;
          break;
        }
      }
    }
    if (at >= 0 && at < overlap.end && this.lines[at] === line.output) {
      overlap.cursor = at + 1;
      if (overlap.cursor >= overlap.end) this.overlap = undefined;
      return true;
    }
    this.overlap = undefined; // a new line: the live stream has passed the read
    return false;
  }

  private changed(): void {
    this.version++;
    if (this.frame) return;
    this.frame = 1;
    this.schedule(() => {
      this.frame = 0;
      for (const listener of this.listeners) listener();
    });
  }
}
