// lodash's mergeWith, for PatternFly's table alone: its cells merge their
// decorators' props with it (react-table's merge-props.js), and lodash's
// version brings about 6 KB gzip of helpers to every screen with a table.
// The build points `lodash/mergeWith` here (vite.config.ts). It keeps
// lodash's rules for what props hold (plain objects, arrays, functions,
// React elements, primitives); buffers, typed arrays and `arguments`, which
// props never hold, are copied as plain values. mergeWith.test.ts checks it
// against lodash on the decorators' shapes.

type Customizer = (objValue: unknown, srcValue: unknown, key: string, object: object, source: object) => unknown;
type Merged = Record<string, unknown>;

const isObject = (value: unknown): value is object =>
  value !== null && (typeof value === 'object' || typeof value === 'function');

function isPlainObject(value: unknown): value is Merged {
  if (value === null || typeof value !== 'object' || Object.prototype.toString.call(value) !== '[object Object]') {
    return false;
  }
  const proto = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null;
}

// lodash's safeGet: never reads __proto__, nor a function's constructor.
function safeGet(object: Merged, key: string): unknown {
  if (key === '__proto__') return undefined;
  if (key === 'constructor' && typeof object[key] === 'function') return undefined;
  return object[key];
}

// lodash's assignMergeValue: an undefined value does not overwrite a key
// that exists; an equal one (SameValueZero) is not written again.
function assign(object: Merged, key: string, value: unknown) {
  const current = object[key];
  const equal = current === value || (current !== current && value !== value);
  if ((value !== undefined && !equal) || (value === undefined && !(key in object))) {
    if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
    else object[key] = value;
  }
}

function keysIn(source: object): string[] {
  const keys: string[] = [];
  for (const key in source) keys.push(key);
  return keys;
}

function baseMerge(object: Merged, source: Merged, customizer: Customizer | undefined, stack: Map<unknown, unknown>) {
  if (object === source) return;
  for (const key of keysIn(source)) {
    const srcValue = safeGet(source, key);
    if (!isObject(srcValue)) {
      const custom = customizer?.(safeGet(object, key), srcValue, key, object, source);
      assign(object, key, custom === undefined ? srcValue : custom);
      continue;
    }
    const objValue = safeGet(object, key);
    if (stack.has(srcValue)) {
      assign(object, key, stack.get(srcValue));
      continue;
    }
    let value = customizer?.(objValue, srcValue, key, object, source);
    let deep = value === undefined;
    if (deep) {
      if (Array.isArray(srcValue)) {
        value = Array.isArray(objValue) ? objValue : isArrayLikeObject(objValue) ? Array.from(objValue as ArrayLike<unknown>) : [];
      } else if (isPlainObject(srcValue)) {
        value = !isObject(objValue) || typeof objValue === 'function' ? Object.create(Object.getPrototypeOf(srcValue)) : objValue;
      } else {
        value = srcValue;
        deep = false;
      }
    }
    if (deep) {
      stack.set(srcValue, value);
      baseMerge(value as Merged, srcValue as Merged, customizer, stack);
      stack.delete(srcValue);
    }
    assign(object, key, value);
  }
}

function isArrayLikeObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const length = (value as { length?: unknown }).length;
  return typeof length === 'number' && length > -1 && length % 1 === 0 && length <= Number.MAX_SAFE_INTEGER;
}

/** mergeWith(object, ...sources, customizer?), as lodash's. */
export default function mergeWith(object: object, ...rest: unknown[]): object {
  const customizer = typeof rest[rest.length - 1] === 'function' && rest.length > 1 ? (rest.pop() as Customizer) : undefined;
  for (const source of rest) {
    if (source) baseMerge(object as Merged, source as Merged, customizer, new Map());
  }
  return object;
}
