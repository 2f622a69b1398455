// Find over a million held lines (docs/benchmarks.md, "Find in the task log"):
//   npx vitest bench --run src/resources/tasks/__tests__/logFind.bench.ts
// Prints, besides Vitest's table, the longest slice the browser waits for
// (what decides whether the tab stays responsive) and the whole search.
import { bench, describe } from 'vitest';
import { firstFailure, findIn, LogFinder, noMatches, SLICE } from '../logTools';

const COUNT = 1_000_000;

/** Lines like a long ansible run's: task headers, coloured results, plain command output. */
function ansibleLikeLog(): string[] {
  const lines = new Array<string>(COUNT);
  for (let i = 0; i < COUNT; i++) {
    const host = `web-${i % 40}.example.com`;
    if (i % 50 === 0) lines[i] = `TASK [deploy : Copy release ${i} to the hosts] ${'*'.repeat(40)}`;
    else if (i % 10 === 0) lines[i] = `\x1b[0;33mchanged: [${host}] => (item=/srv/app/releases/${i})\x1b[0m`;
    else lines[i] = `    ${host} | rsync: sent ${i * 7} bytes  received ${i % 997} bytes  ${(i % 1000) / 10} bytes/sec`;
  }
  lines[COUNT - 10] = `\x1b[0;31mfatal: [web-3.example.com]: FAILED! => {"msg": "disk full"}\x1b[0m`;
  return lines;
}

const log = ansibleLikeLog();

function search(needle: string, caseSensitive: boolean): number {
  const matches = noMatches();
  findIn(log, 0, log.length, needle, { caseSensitive }, matches);
  return matches.count;
}

/** The search as the toolbar runs it, slice by slice: the longest slice and the whole, in ms. */
function sliced(needle: string): { longest: number; total: number; count: number } {
  const pending: (() => void)[] = [];
  const finder = new LogFinder(log, needle, { caseSensitive: false }, () => {}, (next) => pending.push(next));
  let longest = 0;
  const start = performance.now();
  let at = performance.now();
  finder.update();
  longest = performance.now() - at;
  while (pending.length) {
    at = performance.now();
    pending.shift()!();
    longest = Math.max(longest, performance.now() - at);
  }
  return { longest, total: performance.now() - start, count: finder.matches.count };
}

for (const needle of ['disk full', 'changed']) {
  const run = sliced(needle);
  console.log(
    `find "${needle}" over ${COUNT.toLocaleString('en')} lines, ${SLICE.toLocaleString('en')} a slice: ` +
      `${run.count} matches, whole ${run.total.toFixed(0)} ms, longest slice ${run.longest.toFixed(1)} ms`,
  );
}

describe(`find over ${COUNT.toLocaleString('en')} lines`, () => {
  bench('a rare word, case ignored', () => void search('disk full', false), { iterations: 5, warmupIterations: 1 });
  bench('a rare word, case matched', () => void search('disk full', true), { iterations: 5, warmupIterations: 1 });
  bench('a word on every tenth line, case ignored', () => void search('changed', false), { iterations: 5, warmupIterations: 1 });
  bench('the first failure (near the end)', () => void firstFailure(log, new Set(), true), { iterations: 5, warmupIterations: 1 });
});
