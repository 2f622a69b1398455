// ANSI escape handling for the task log: SGR colours and styles become
// styled segments; every other escape sequence (cursor moves, erase line,
// OSC titles) is dropped. Each line is read on its own: ansible, terraform
// and git reset their colours before the line ends, and reading a line must
// not need the million before it.

export interface Segment {
  text: string;
  /** CSS classes: ansi-fg-N, ansi-bg-N (N 0-15), ansi-bold, ansi-dim, ansi-italic, ansi-underline. */
  className?: string;
  /** 256-colour and true-colour values, which have no class. */
  style?: { color?: string; backgroundColor?: string };
}

interface Pen {
  fg?: number | string;
  bg?: number | string;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
}

// CSI (ESC [ params final), OSC (ESC ] … BEL or ESC \), and two-character escapes.
// eslint-disable-next-line no-control-regex
const ESCAPE = /\x1b(?:\[([0-9;:?]*)([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])/g;

/**
 * What a terminal would leave on screen of a line with carriage returns
 * (git's progress: "Receiving objects: 10%\rReceiving objects: 100%"): the
 * last segment that has text.
 */
export function lastSegment(line: string): string {
  if (!line.includes('\r')) return line;
  const parts = line.split('\r');
  for (let i = parts.length - 1; i >= 0; i--) if (parts[i] !== '') return parts[i];
  return '';
}

// The xterm 256-colour cube and grey ramp, for 38;5;N beyond the first 16.
function color256(n: number): number | string {
  if (n < 16) return n;
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return `rgb(${v}, ${v}, ${v})`;
  }
  const c = n - 16;
  const level = (x: number) => (x === 0 ? 0 : 55 + x * 40);
  return `rgb(${level(Math.floor(c / 36))}, ${level(Math.floor(c / 6) % 6)}, ${level(c % 6)})`;
}

function applySgr(pen: Pen, params: string): Pen {
  const codes = params === '' ? [0] : params.split(/[;:]/).map((p) => (p === '' ? 0 : Number(p)));
  let next = { ...pen };
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i];
    if (code === 0) next = {};
    else if (code === 1) next.bold = true;
    else if (code === 2) next.dim = true;
    else if (code === 3) next.italic = true;
    else if (code === 4) next.underline = true;
    else if (code === 22) next.bold = next.dim = false;
    else if (code === 23) next.italic = false;
    else if (code === 24) next.underline = false;
    else if (code >= 30 && code <= 37) next.fg = code - 30;
    else if (code >= 90 && code <= 97) next.fg = code - 90 + 8;
    else if (code === 39) next.fg = undefined;
    else if (code >= 40 && code <= 47) next.bg = code - 40;
    else if (code >= 100 && code <= 107) next.bg = code - 100 + 8;
    else if (code === 49) next.bg = undefined;
    else if (code === 38 || code === 48) {
      let value: number | string | undefined;
      if (codes[i + 1] === 5) {
        value = color256(codes[i + 2] ?? 0);
        i += 2;
      } else if (codes[i + 1] === 2) {
        value = `rgb(${codes[i + 2] ?? 0}, ${codes[i + 3] ?? 0}, ${codes[i + 4] ?? 0})`;
        i += 4;
      }
      if (code === 38) next.fg = value;
      else next.bg = value;
    }
  }
  return next;
}

function segment(text: string, pen: Pen): Segment {
  const classes: string[] = [];
  const style: Segment['style'] = {};
  if (typeof pen.fg === 'number') classes.push(`ansi-fg-${pen.fg}`);
  else if (pen.fg) style.color = pen.fg;
  if (typeof pen.bg === 'number') classes.push(`ansi-bg-${pen.bg}`);
  else if (pen.bg) style.backgroundColor = pen.bg;
  if (pen.bold) classes.push('ansi-bold');
  if (pen.dim) classes.push('ansi-dim');
  if (pen.italic) classes.push('ansi-italic');
  if (pen.underline) classes.push('ansi-underline');
  const out: Segment = { text };
  if (classes.length) out.className = classes.join(' ');
  if (style.color || style.backgroundColor) out.style = style;
  return out;
}

/** A log line as styled segments: the last carriage-return segment, colours applied, escapes removed. */
export function parseAnsi(line: string): Segment[] {
  const text = lastSegment(line);
  if (!text.includes('\x1b')) return text ? [{ text }] : [];
  const segments: Segment[] = [];
  let pen: Pen = {};
  let from = 0;
  for (const match of text.matchAll(ESCAPE)) {
    if (match.index > from) segments.push(segment(text.slice(from, match.index), pen));
    if (match[2] === 'm') pen = applySgr(pen, match[1] ?? '');
    from = match.index + match[0].length;
  }
  if (from < text.length) segments.push(segment(text.slice(from), pen));
  return segments;
}

/** A line's text without any escape sequence (what a search or a copy sees): parseAnsi's text, without building its segments. */
export function plainText(line: string): string {
  const text = lastSegment(line);
  return text.includes('\x1b') ? text.replace(ESCAPE, '') : text;
}
