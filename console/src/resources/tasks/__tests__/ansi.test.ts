import { describe, expect, it } from 'vitest';
import { lastSegment, parseAnsi, plainText } from '../ansi';

describe('ANSI in the task log', () => {
  it('renders SGR colours and styles as classes', () => {
    expect(parseAnsi('\x1b[0;32mok: [web1]\x1b[0m done')).toEqual([
      { text: 'ok: [web1]', className: 'ansi-fg-2' },
      { text: ' done' },
    ]);
    expect(parseAnsi('\x1b[1;31mfatal\x1b[22m plain red\x1b[39m')).toEqual([
      { text: 'fatal', className: 'ansi-fg-1 ansi-bold' },
      { text: ' plain red', className: 'ansi-fg-1' },
    ]);
    expect(parseAnsi('\x1b[93;44mhi')).toEqual([{ text: 'hi', className: 'ansi-fg-11 ansi-bg-4' }]);
  });

  it('renders 256-colour and true-colour values as styles', () => {
    expect(parseAnsi('\x1b[38;5;196mx')).toEqual([{ text: 'x', style: { color: 'rgb(255, 0, 0)' } }]);
    expect(parseAnsi('\x1b[38;2;1;2;3;48;5;2my')).toEqual([
      { text: 'y', className: 'ansi-bg-2', style: { color: 'rgb(1, 2, 3)' } },
    ]);
  });

  it('drops escapes that are not colours (erase line, cursor moves, titles)', () => {
    expect(plainText('\x1b[2K\x1b[1Gterraform \x1b]0;title\x07plan')).toBe('terraform plan');
  });

  it('shows the last carriage-return segment of a progress line', () => {
    expect(lastSegment('Receiving objects:  10%\rReceiving objects:  55%\rReceiving objects: 100%, done.')).toBe(
      'Receiving objects: 100%, done.',
    );
    expect(lastSegment('Counting objects: 100%\r')).toBe('Counting objects: 100%');
    expect(plainText('\x1b[32m10%\r\x1b[32m100%\x1b[0m')).toBe('100%');
  });

  it('leaves a plain line as it is', () => {
    expect(parseAnsi('PLAY [all] ***')).toEqual([{ text: 'PLAY [all] ***' }]);
    expect(parseAnsi('')).toEqual([]);
  });
});
