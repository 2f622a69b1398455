import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WrapLayout } from '../LogView';
import { copyText, findIn, firstFailure, firstMatchFrom, LogFinder, noMatches, SLICE, stepMatch } from '../logTools';

// Real ansible-playbook 2.14 output (ansible-core, captured for these tests;
// see ansible/README.md for the playbooks and commands).
const sample = (name: string) => readFileSync(join(import.meta.dirname, 'ansible', name), 'utf8').replace(/\n$/, '').split('\n');

function findAll(lines: string[], needle: string, caseSensitive = false) {
  const matches = noMatches();
  findIn(lines, 0, lines.length, needle, { caseSensitive }, matches);
  return [...matches.lines.subarray(0, matches.count)].map((line, i) => [line, matches.columns[i]]);
}

describe('find in the log', () => {
  const lines = ['TASK [Deploy]', 'ok: deploy done', '\x1b[31mDEPLOY\x1b[0m failed: deploy again', 'nothing here'];

  it('counts every occurrence, several on a line, ignoring case by default', () => {
    expect(findAll(lines, 'deploy')).toEqual([
      [0, 6],
      [1, 4],
      [2, 0],
      [2, 15],
    ]);
  });

  it('matches case when asked', () => {
    expect(findAll(lines, 'DEPLOY', true)).toEqual([[2, 0]]);
    expect(findAll(lines, 'Deploy', true)).toEqual([[0, 6]]);
  });

  it('searches the text shown, not the colour escapes', () => {
    expect(findAll(lines, '31m')).toEqual([]);
    expect(findAll(lines, 'deploy failed')).toEqual([[2, 0]]);
    expect(findAll(lines, 'DEPLOY failed')).toEqual([[2, 0]]);
  });

  it('steps next and previous, wrapping around both ends', () => {
    expect(stepMatch(3, -1, 1)).toBe(0);
    expect(stepMatch(3, -1, -1)).toBe(2);
    expect(stepMatch(3, 2, 1)).toBe(0);
    expect(stepMatch(3, 0, -1)).toBe(2);
    expect(stepMatch(3, 1, 1)).toBe(2);
    expect(stepMatch(0, -1, 1)).toBe(-1);
  });

  it('starts from the first occurrence at or after a line, wrapping to the first', () => {
    const matches = noMatches();
    findIn(lines, 0, lines.length, 'deploy', { caseSensitive: false }, matches);
    expect(firstMatchFrom(matches, 2)).toBe(2);
    expect(firstMatchFrom(matches, 3)).toBe(0);
  });

  it('reads a long log a slice at a time and then only the lines that arrive', () => {
    const log = Array.from({ length: SLICE * 2 + 5 }, (_, i) => (i % 1000 === 0 ? `needle ${i}` : `line ${i}`));
    const pending: (() => void)[] = [];
    let progress = 0;
    const finder = new LogFinder(log, 'NEEDLE', { caseSensitive: false }, () => progress++, (next) => pending.push(next));
    finder.update();
    // One slice read, the rest left for later: the browser gets a turn.
    expect(finder.searched).toBe(SLICE);
    expect(finder.done).toBe(false);
    while (pending.length) pending.shift()!();
    expect(finder.done).toBe(true);
    expect(progress).toBe(3);
    expect(finder.matches.count).toBe(41);
    log.push('a needle arrives', 'and another needle');
    finder.update();
    expect(finder.matches.count).toBe(43);
    expect(finder.matches.lines[42]).toBe(log.length - 1);
  });

  it('stops reading when cancelled', () => {
    const log = Array.from({ length: SLICE * 3 }, () => 'x');
    const pending: (() => void)[] = [];
    const finder = new LogFinder(log, 'x', { caseSensitive: false }, () => {}, (next) => pending.push(next));
    finder.update();
    finder.cancel();
    while (pending.length) pending.shift()!();
    expect(finder.searched).toBe(SLICE);
  });
});

describe('copy without timestamps', () => {
  it('copies each line’s text: no escapes, no times, no line numbers', () => {
    expect(copyText(['\x1b[32mok: [localhost]\x1b[0m', 'progress 10%\rprogress 100%', 'plain'])).toBe(
      'ok: [localhost]\nprogress 100%\nplain\n',
    );
    expect(copyText([])).toBe('');
  });
});

const none: ReadonlySet<number> = new Set();

describe('the first failure of an ansible task', () => {
  it('is the first failed task that was not ignored (a loop item here)', () => {
    const lines = sample('fail.txt');
    const at = firstFailure(lines, none, true);
    expect(lines[at]).toMatch(/^failed: \[localhost\] \(item=2\)/);
    // The ignored one came first.
    expect(lines.findIndex((line) => line.startsWith('fatal: [localhost]: FAILED!'))).toBeLessThan(at);
  });

  it('is the same line in coloured output', () => {
    expect(firstFailure(sample('fail-color.txt'), none, true)).toBe(firstFailure(sample('fail.txt'), none, true));
  });

  it('is an unreachable host', () => {
    const lines = sample('unreachable.txt');
    expect(lines[firstFailure(lines, none, true)]).toMatch(/^fatal: \[badhost\]: UNREACHABLE!/);
  });

  it('is ansible-playbook refusing to start', () => {
    expect(firstFailure(sample('syntax.txt'), none, true)).toBe(0);
  });

  it('is none in a successful run, whose recap counts failed=0', () => {
    expect(firstFailure(sample('ok.txt'), none, true)).toBe(-1);
  });

  it('is a failed task even after a line on stderr (a warning)', () => {
    expect(firstFailure(['[WARNING]: no inventory', 'fatal: [web]: FAILED! => {}'], new Set([0]), true)).toBe(1);
  });

  it('is the first line on stderr when no task failed, or only ignored ones did', () => {
    const lines = sample('fail.txt');
    const ignoredOnly = lines.slice(0, firstFailure(lines, none, true));
    expect(firstFailure(ignoredOnly, new Set([ignoredOnly.length - 1, 2]), true)).toBe(2);
    expect(firstFailure(sample('ok.txt'), new Set([4]), true)).toBe(4);
  });

  it('is never an error-shaped line of stdout: ansible reports its own failures', () => {
    expect(firstFailure(['Error: a debug message that looks bad'], none, true)).toBe(-1);
  });
});

describe('the first failure of any other program', () => {
  it('is the first line on stderr, before any error-shaped line of stdout', () => {
    expect(firstFailure(['Error: printed on stdout', 'working', 'boom', 'later'], new Set([3, 2]), false)).toBe(2);
  });

  it('is a program’s error line when nothing was on stderr', () => {
    expect(firstFailure(['building', 'Error: disk full', 'fatal: not a git repository'], none, false)).toBe(1);
    expect(firstFailure(['run.sh: line 3: nope: command not found'], none, false)).toBe(0);
    expect(firstFailure(['Traceback (most recent call last):', '  File "x.py"'], none, false)).toBe(0);
    expect(firstFailure(['no errors here', 'errors: 0 is fine'], none, false)).toBe(-1);
  });

  it('ignores ansible’s failure lines (a script that prints them is not ansible)', () => {
    expect(firstFailure(['fatal: [web]: FAILED! => {}', 'x'], new Set([1]), false)).toBe(1);
  });
});

describe('wrapped rows', () => {
  it('counts the rows each line takes at a width, and finds the line of a row', () => {
    const layout = new WrapLayout(10);
    const lines = ['short', 'x'.repeat(25), '', '\x1b[31m' + 'y'.repeat(10) + '\x1b[0m', '\tz'];
    layout.extend(lines);
    expect([0, 1, 2, 3, 4, 5].map((i) => layout.rowOf(i))).toEqual([0, 1, 4, 5, 6, 7]);
    expect([0, 1, 3, 4, 5, 6].map((row) => layout.lineAt(row))).toEqual([0, 1, 1, 2, 3, 4]);
    lines.push('w'.repeat(11));
    layout.extend(lines);
    expect(layout.rowOf(6)).toBe(9);
  });
});
