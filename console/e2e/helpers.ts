// Shared steps of the end-to-end tests: calls to the real API to set the
// scene, and the few clicks every test needs (sign in, open the drawer).
import { expect, request, type APIRequestContext, type Locator, type Page, type TestInfo } from '@playwright/test';

export const admin = { username: 'admin', password: process.env.BASTION_ADMIN_PASSWORD ?? '' };

/** A name no other test (or the other viewport's run) uses. */
export function unique(testInfo: TestInfo, prefix: string): string {
  return `${prefix}-${testInfo.project.name}-${Date.now().toString(36)}`;
}

export interface ApiUser {
  id: number;
  username: string;
  name: string;
}

/** An API client signed in as the given user, as a script would be. */
export async function apiAs(baseURL: string, username: string, password: string): Promise<APIRequestContext> {
  const api = await request.newContext({ baseURL });
  const res = await api.post('/api/auth/login', { data: { auth: username, password } });
  expect(res.status(), await res.text()).toBe(204);
  return api;
}

export async function createUser(
  api: APIRequestContext,
  username: string,
  extra: { admin?: boolean; can_create_project?: boolean; name?: string } = {},
): Promise<ApiUser & { password: string }> {
  const password = `pw-${username}`;
  const res = await api.post('/api/users', {
    data: { username, name: extra.name ?? `Test ${username}`, email: `${username}@example.com`, password, ...extra },
  });
  expect(res.status(), await res.text()).toBe(201);
  return { ...(await res.json()), password };
}

export async function createProject(api: APIRequestContext, name: string): Promise<{ id: number; name: string }> {
  const res = await api.post('/api/projects', { data: { name } });
  expect(res.status(), await res.text()).toBe(201);
  return res.json();
}

export async function addMember(api: APIRequestContext, projectId: number, userId: number, role: string) {
  const res = await api.post(`/api/project/${projectId}/users`, { data: { user_id: userId, role } });
  expect(res.status(), await res.text()).toBe(204);
}

/** Signs in through the sign-in screen. */
export async function signIn(page: Page, username: string, password: string) {
  await page.goto('/auth/login');
  await page.getByLabel(/^Username/).fill(username);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByLabel(/^Password/).press('Enter');
}

/** Signs the page in with an API session's cookies, skipping the screen. */
export async function useSession(page: Page, api: APIRequestContext) {
  await page.context().addCookies((await api.storageState()).cookies);
}

/** Below 960 pixels the drawer hides behind a toggle (docs/features.md §2). */
export async function openDrawer(page: Page) {
  if (page.viewportSize()!.width < 960) {
    const toggle = page.locator('#drawer-toggle');
    await expect(toggle).toBeVisible();
    if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  }
  await expect(page.getByTestId('project-switcher')).toBeInViewport();
}

export async function screenshot(page: Page, testInfo: TestInfo, name: string) {
  await page.screenshot({ path: testInfo.outputPath(`${name}.png`), fullPage: true });
}

/**
 * Clicks, and checks that the snackbar `text` showed. A snackbar lives 3
 * seconds (docs/features.md §8), and on a busy machine the click itself
 * (Playwright waits for the page to settle after it) can use most of them:
 * the wait for the snackbar starts before the click, so it cannot miss one
 * that came and went while the click was still returning.
 */
export async function clickAndSeeSnackbar(page: Page, button: Locator, text: string) {
  const shown = page.getByText(text).waitFor({ state: 'visible', timeout: 30_000 });
  await button.click();
  await shown;
}
