import { cloneElement, createElement, isValidElement } from 'react';
import { css } from '@patternfly/react-styles';
import { describe, expect, it } from 'vitest';
import mergeWith from '../mergeWith';

type MergeWith = (object: object, ...rest: unknown[]) => object;
// lodash itself, which the build replaces (vite.config.ts); a computed name
// keeps TypeScript from looking for its types.
const lodashName = 'lodash/mergeWith';
const lodash = async () => ((await import(/* @vite-ignore */ lodashName)) as { default: MergeWith }).default;

// react-table's merge-props.js, verbatim but for the merge function.
function mergeProps(merge: MergeWith, ...props: unknown[]) {
  const [first, ...rest] = props;
  if (!rest.length) return merge({}, first);
  return merge(merge({}, first), ...rest, (a: unknown, b: unknown, key: string) => {
    if (key === 'children') {
      if (a && b) return cloneElement(a as never, { children: b } as never);
      return Object.assign({}, b, a);
    }
    if (key === 'className') return css(a as string, b as string);
    return undefined;
  });
}

const onClick = () => undefined;
// Shapes the table's decorators return (selectable, sortable, collapsible,
// cellWidth, visibility, info…), nulls for those not turned on.
const cases: unknown[][] = [
  [{ className: 'pf-m-width-20' }],
  [null, { className: 'pf-v6-c-table__action', isVisible: true }, null, { className: 'pf-m-hidden-on-md' }],
  [
    { component: 'td', className: 'pf-v6-c-table__check', children: createElement('input', { type: 'checkbox', onChange: onClick }) },
    { className: 'pf-m-width-10', style: { width: '10%' } },
    { children: createElement('span', null, 'sort'), 'aria-sort': 'ascending', onClick },
  ],
  [{ children: createElement('b', null, 'a') }, { children: undefined, className: undefined }, { tooltip: createElement('i', null, 't') }],
  [{ style: { color: 'red', nested: { a: 1 } } }, { style: { nested: { b: 2 }, width: 3 } }, { list: [1, 2] }, { list: [undefined, 3, 4] }],
  [{ value: 1, fn: onClick }, { value: undefined, fn: null }, { extra: Number.NaN }, { extra: Number.NaN }],
  [{}, { arr: [{ a: 1 }] }, { arr: [{ b: 2 }] }, { obj: new Date(0) }, { obj: { x: 1 } }],
];

describe('mergeWith (the build’s stand-in for lodash’s)', () => {
  it('merges the table decorators’ props exactly as lodash does', async () => {
    const real = await lodash();
    for (const props of cases) {
      const mine = mergeProps(mergeWith, ...props);
      const theirs = mergeProps(real, ...props);
      expect(mine).toStrictEqual(theirs);
    }
  });

  it('copies rather than mutates the first props, deeply, as lodash does', async () => {
    const real = await lodash();
    const first = { style: { color: 'red' } };
    const merged = mergeProps(mergeWith, first, { style: { width: 1 } }) as { style: object };
    expect(first).toEqual({ style: { color: 'red' } });
    expect(merged.style).not.toBe(first.style);
    expect(merged).toStrictEqual(mergeProps(real, { style: { color: 'red' } }, { style: { width: 1 } }));
  });

  it('composes two children and joins class names', () => {
    const merged = mergeProps(mergeWith, { children: createElement('div'), className: 'a' }, { children: 'text', className: 'b' }) as {
      children: unknown;
      className: string;
    };
    expect(isValidElement(merged.children)).toBe(true);
    expect((merged.children as { props: { children: unknown } }).props.children).toBe('text');
    expect(merged.className).toBe('a b');
  });

  it('ignores __proto__ in a source, as lodash does', async () => {
    const real = await lodash();
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object;
    const mine = mergeWith({}, hostile) as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(mine).toStrictEqual(real({}, hostile));
  });
});
