// The task log's toolbar (docs/features.md, "Beyond the anchors"): find,
// match case, first failure, copy and wrap over a real, failing bash task's
// log of 20,000 lines with one line on stderr (marked, and where First
// failure goes, past an error-shaped line on stdout), with screenshots in
// both themes at desktop and mobile sizes, in one page session.
import { expect, test, type Page } from '@playwright/test';
import { admin, apiAs, createProject, screenshot, unique, useSession } from './helpers';
import { gitRepository } from './repository';
import { createTemplate, sceneFor, startTask, taskStatus } from './tasks-helpers';

const LINES = 20_000;

/** The theme as the user menu sets it (settings/darkMode.ts), without a reload that would lose the find. */
async function inTheme(page: Page, theme: 'light' | 'dark') {
  await page.evaluate((dark) => {
    window.localStorage.setItem('darkMode', dark ? '1' : '0');
    document.documentElement.classList.toggle('pf-v6-theme-dark', dark);
  }, theme === 'dark');
}
// 20,000 numbered lines; five hold "needle" (one as NEEDLE); line 12,345 of
// the script goes to stderr, line 100 looks like an error but is on stdout;
// one line is 400 characters long (for wrap). The script then fails.
const script = [
  '#!/bin/bash',
  `for i in $(seq 1 ${LINES}); do`,
  '  if [ "$i" = 12345 ]; then echo "Error: the disk is full" >&2',
  '  elif [ "$i" = 100 ]; then echo "Error: only a warning, on stdout"',
  '  elif [ "$i" = 20000 ]; then printf "line %s %s\\n" "$i" "$(printf "long%.0s " $(seq 1 80))"',
  '  elif [ $((i % 4000)) = 0 ]; then echo "line $i has a needle in it"',
  '  elif [ "$i" = 19999 ]; then echo "line $i has a NEEDLE in it"',
  '  else printf "line %s \\033[32mok\\033[0m of the deploy\\n" "$i"; fi',
  'done',
  'exit 1',
  '',
].join('\n');

test('find, match case, the stderr mark and first failure, copy and wrap in a real task’s log; screenshots @desktop', async ({ page, context, baseURL }, testInfo) => {
  test.setTimeout(300_000);
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'Log viewer'));
  const resources = await sceneFor(api, project.id, gitRepository({ 'many.sh': script }));
  const template = await createTemplate(api, resources, { name: 'Many lines', app: 'bash', playbook: 'many.sh' });
  const taskId = await startTask(api, project.id, { template_id: template.id });
  await expect.poll(() => taskStatus(api, project.id, taskId), { timeout: 180_000, intervals: [1000] }).toBe('error');

  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await useSession(page, api);
  await page.goto(`/project/${project.id}/history?t=${taskId}`);
  const dialog = page.getByRole('dialog', { name: /^Task #/ });
  const log = dialog.getByRole('log');
  await expect(log).toContainText('has a NEEDLE in it', { timeout: 60_000 });
  const held = Number(await log.getAttribute('data-lines'));
  expect(held).toBeGreaterThanOrEqual(LINES);

  // Find: five occurrences, case ignored; next and previous wrap around.
  const find = dialog.getByTestId('log-find');
  const count = dialog.getByTestId('log-find-count');
  await find.fill('needle');
  await expect(count).toHaveText('1 / 5 matches');
  const current = log.locator('.task-log__match--current');
  await expect(current).toBeInViewport();
  await expect(log.locator('.task-log__row--current')).toContainText('line 4000 has a needle in it');
  await dialog.getByRole('button', { name: 'Next match' }).click();
  await expect(count).toHaveText('2 / 5 matches');
  await expect(log.locator('.task-log__row--current')).toContainText('line 8000 has');
  await dialog.getByRole('button', { name: 'Previous match' }).click();
  await dialog.getByRole('button', { name: 'Previous match' }).click();
  await expect(count).toHaveText('5 / 5 matches');
  await expect(current).toHaveText('NEEDLE');
  await expect(current).toBeInViewport();
  await find.press('Enter'); // Enter is next: from the last, the first
  await expect(count).toHaveText('1 / 5 matches');
  await dialog.getByTestId('log-find-case').click();
  await expect(count).toHaveText('1 / 4 matches'); // the lowercase ones
  await find.fill('NEEDLE');
  await expect(count).toHaveText('1 / 1 matches');
  await expect(log.locator('.task-log__row--current')).toContainText('line 19999');
  for (const theme of ['light', 'dark'] as const) {
    await inTheme(page, theme);
    await screenshot(page, testInfo, `task-log-find-${theme}`);
  }

  // The first failure: the line the script wrote to stderr, marked as
  // such (a rule, and words for screen readers), not the error-shaped line
  // of stdout before it.
  await dialog.getByTestId('log-first-failure').click();
  const failure = log.locator('.task-log__row', { hasText: 'Error: the disk is full' });
  await expect(failure).toBeInViewport();
  const failureLine = await failure.getAttribute('data-line');
  await expect(dialog.getByTestId('log-note')).toHaveText(`First failure: line ${failureLine}`);
  await expect(failure).toHaveAttribute('data-stream', 'stderr');
  await expect(failure).toHaveClass(/task-log__row--stderr/);
  await expect(failure.locator('.task-log__stream')).toHaveText('Standard error');
  await expect(log.locator('[data-stream="stderr"]')).toHaveCount(1); // its neighbours, on stdout, are not
  await expect(log.locator(`[data-line="${Number(failureLine) + 1}"]`)).not.toHaveAttribute('data-stream');
  for (const theme of ['light', 'dark'] as const) {
    await inTheme(page, theme);
    await screenshot(page, testInfo, `task-log-stderr-${theme}`);
  }
  await find.fill('only a warning');
  await expect(count).toHaveText('1 / 1 matches');
  await expect(log.locator('.task-log__row--current')).not.toHaveAttribute('data-stream');

  // Copy: every held line's text, without colour escapes, times or numbers.
  await dialog.getByTestId('log-copy').click();
  await expect(dialog.getByTestId('log-note')).toHaveText(`Copied ${held} lines`);
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  const copiedLines = copied.replace(/\n$/, '').split('\n');
  expect(copiedLines).toHaveLength(held);
  expect(copied).not.toContain('\x1b');
  expect(copiedLines).toContain('line 1 ok of the deploy');
  expect(copiedLines[Number(failureLine) - 1]).toBe('Error: the disk is full'); // the mark's words are not copied

  // Wrap: the long last line takes several rows; the choice is remembered.
  const wrap = dialog.getByRole('button', { name: 'Wrap lines' });
  await expect(wrap).toHaveAttribute('aria-pressed', 'false');
  await wrap.click();
  await expect(log).toHaveAttribute('data-wrap', 'true');
  await log.evaluate((el) => (el.scrollTop = el.scrollHeight));
  const last = log.locator(`[data-line="${held}"]`);
  await expect(last).toBeVisible();
  expect((await last.boundingBox())!.height).toBeGreaterThan(40);
  await page.reload();
  await expect(dialog.getByRole('button', { name: 'Wrap lines' })).toHaveAttribute('aria-pressed', 'true');
  await expect(log).toHaveAttribute('data-wrap', 'true');
  await expect(log).toContainText('has a NEEDLE in it', { timeout: 60_000 });

  await page.setViewportSize({ width: 412, height: 915 });
  await dialog.getByTestId('log-first-failure').click();
  await expect(failure).toBeInViewport();
  for (const theme of ['light', 'dark'] as const) {
    await inTheme(page, theme);
    await screenshot(page, testInfo, `task-log-wrap-mobile-${theme}`);
  }
});
