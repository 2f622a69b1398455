import { expect, test } from '@playwright/test';
import { admin, apiAs, createProject, screenshot, unique, useSession } from './helpers';

// docs/features.md §2, §9: a 260-pixel drawer, fixed from 960 pixels up, toggled below.
test('the drawer is 260 pixels wide, fixed on a desktop and toggled on a narrow screen', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'drawer'));
  await useSession(page, api);
  await page.goto(`/project/${project.id}/activity`);
  await expect(page.getByRole('heading', { name: 'Activity' })).toBeVisible();

  const drawer = page.locator('#drawer');
  const toggle = page.locator('#drawer-toggle');
  if (page.viewportSize()!.width >= 960) {
    await expect(toggle).toHaveCount(0);
  } else {
    await expect(toggle).toBeVisible();
    await expect(page.getByTestId('project-switcher')).not.toBeInViewport();
    await toggle.click();
    await expect(page.getByTestId('project-switcher')).toBeInViewport();
  }
  // Rounded, and polled: the drawer may still be sliding in.
  await expect.poll(async () => Math.round((await drawer.boundingBox())!.width)).toBe(260);

  // Picking a page closes the drawer again on a narrow screen.
  await page.getByRole('link', { name: 'Team' }).click();
  await expect(page.getByRole('heading', { name: 'Team' })).toBeVisible();
  if (page.viewportSize()!.width < 960) await expect(page.getByTestId('project-switcher')).not.toBeInViewport();
});

// docs/features.md §9: the breakpoint is 960 itself, not PatternFly's 1200 (nor anything
// between 800 and 1280). The viewport is set here, so the desktop project
// suffices: the mobile one emulates a touch phone, whatever its width.
test('the drawer is fixed at 1000 pixels and toggled at 940 @desktop', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'breakpoint'));
  await useSession(page, api);
  const drawer = page.locator('#drawer');
  const toggle = page.locator('#drawer-toggle');
  const switcher = page.getByTestId('project-switcher');

  await page.setViewportSize({ width: 1000, height: 800 });
  await page.goto(`/project/${project.id}/activity`);
  await expect(page.getByRole('heading', { name: 'Activity' })).toBeVisible();
  await expect(toggle).toHaveCount(0);
  await expect(switcher).toBeInViewport();
  const fixed = (await drawer.boundingBox())!;
  expect(fixed.x).toBe(0);
  expect(Math.round(fixed.width)).toBe(260);
  // Fixed, not laid over the page: the page starts where the drawer ends.
  const main = (await page.locator('.pf-v6-c-page__main-container').boundingBox())!;
  expect(main.x).toBeGreaterThanOrEqual(fixed.x + fixed.width);

  await page.setViewportSize({ width: 940, height: 800 });
  await expect(toggle).toBeVisible();
  await expect(switcher).not.toBeInViewport();
  await toggle.click();
  await expect(switcher).toBeInViewport();
  // The drawer slides in: wait until it has settled (sub-pixel widths
  // happen while it moves).
  await expect.poll(async () => Math.round((await drawer.boundingBox())!.width)).toBe(260);
});

// docs/features.md §2: the drawer is only under /project/.
test('/users and the sign-in screen have no drawer', async ({ page, baseURL }) => {
  await page.goto('/auth/login');
  await expect(page.getByRole('button', { name: 'Sign in', exact: true })).toBeVisible();
  await expect(page.locator('#drawer')).toHaveCount(0);
  await expect(page.locator('#drawer-toggle')).toHaveCount(0);

  const api = await apiAs(baseURL!, admin.username, admin.password);
  await useSession(page, api);
  await page.goto('/users');
  await expect(page.getByRole('grid', { name: 'Users' })).toBeVisible();
  await expect(page.locator('#drawer')).toHaveCount(0);
  await expect(page.locator('#drawer-toggle')).toHaveCount(0);
});

// Issue #23 item 7: from 720 pixels high every drawer entry, the user menu at
// its foot included, is in view without scrolling; lower, the drawer scrolls
// (the page does not) and the foot is reached by scrolling the drawer. An
// admin sees every entry a project has.
test('every drawer entry fits from 720 pixels high, and the drawer scrolls below that @desktop', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'fits'));
  await useSession(page, api);
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto(`/project/${project.id}/activity`);
  await expect(page.getByRole('heading', { name: 'Activity' })).toBeVisible();

  const drawer = page.locator('#drawer');
  const links = drawer.getByRole('navigation', { name: 'Project' }).getByRole('link');
  await expect(links).toHaveCount(10);
  const entries = [
    page.getByTestId('project-switcher'),
    ...(await links.all()),
    page.getByRole('switch', { name: 'Dark mode' }),
    page.getByTestId('language-menu'),
    page.getByTestId('user-menu'),
  ];
  const scrollOf = () => drawer.evaluate((el) => ({ top: el.scrollTop, overflow: el.scrollHeight - el.clientHeight }));
  for (const entry of entries) await expect(entry).toBeInViewport({ ratio: 1 });
  expect(await scrollOf()).toEqual({ top: 0, overflow: 0 });
  await screenshot(page, testInfo, 'drawer-720');

  await page.setViewportSize({ width: 1280, height: 560 });
  const userMenu = page.getByTestId('user-menu');
  await expect(userMenu).not.toBeInViewport();
  expect((await scrollOf()).overflow).toBeGreaterThan(0);
  // The page itself does not scroll: only the drawer does.
  expect(await page.evaluate(() => document.scrollingElement!.scrollHeight - window.innerHeight)).toBeLessThanOrEqual(0);
  await drawer.hover();
  await page.mouse.wheel(0, 1000);
  await expect(userMenu).toBeInViewport({ ratio: 1 });
  expect((await scrollOf()).top).toBeGreaterThan(0);
  await screenshot(page, testInfo, 'drawer-560-scrolled');
});
