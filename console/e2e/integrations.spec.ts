// Integrations against the real server: one made through the console,
// started by a signed webhook sent with curl; what a guest may not do; and
// screenshots of the list, the detail and its dialogs in both themes.
import { createHmac } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { expect as baseExpect, test, type APIRequestContext, type Page, type TestInfo } from '@playwright/test';
import { addMember, admin, apiAs, createProject, createUser, screenshot, unique, useSession } from './helpers';

// Six agents share two cores here: a first page load can take most of the
// default 30 s, so these waits get a minute, and the longer tests more time.
const expect = baseExpect.configure({ timeout: 60_000 });
test.describe.configure({ timeout: 360_000 });

const themes = ['light', 'dark'] as const;
const aliasPattern = /\/api\/integrations\/[A-Za-z0-9_-]{16,}$/;

async function created<T>(res: Awaited<ReturnType<APIRequestContext['post']>>): Promise<T> {
  expect(res.status(), await res.text()).toBe(201);
  return res.json() as Promise<T>;
}

/** A demo project: its templates run without the internet. */
async function demoProject(api: APIRequestContext, name: string) {
  const project = await created<{ id: number; name: string }>(await api.post('/api/projects', { data: { name, demo: true } }));
  // The demo's templates are restored one by one: wait for the bash one.
  let bash: { id: number; name: string; app: string } | undefined;
  await expect
    .poll(async () => {
      const templates = (await (await api.get(`/api/project/${project.id}/templates`)).json()) as { id: number; name: string; app: string }[];
      bash = templates.find((t) => t.app === 'bash');
      return bash?.app;
    })
    .toBe('bash');
  // The webhook sets a variable that is not the template's survey's: the
  // template must let a task set other variables (issue #19).
  const path = `/api/project/${project.id}/templates/${bash!.id}`;
  const full = (await (await api.get(path)).json()) as Record<string, unknown>;
  const put = await api.put(path, { data: { ...full, allow_override_extra_vars_in_task: true } });
  expect(put.status(), await put.text()).toBe(204);
  return { project, template: bash! };
}

/** A login_password key; its password is the webhook's shared secret. POST /keys answers 204, so the id is looked up. */
async function loginPasswordKey(api: APIRequestContext, projectId: number, name: string, password: string) {
  const res = await api.post(`/api/project/${projectId}/keys`, {
    data: { name, type: 'login_password', login_password: { login: 'webhook', password } },
  });
  expect(res.status(), await res.text()).toBe(204);
  const keys = (await (await api.get(`/api/project/${projectId}/keys`)).json()) as { id: number; name: string }[];
  return keys.find((key) => key.name === name)!;
}

/** Sends a webhook as another server would: curl, no shell; answers the status code. */
function curlWebhook(url: string, body: string, headers: Record<string, string>): string {
  const args = ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'POST', '-H', 'Content-Type: application/json'];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push('--data-binary', body, url);
  return execFileSync('curl', args, { encoding: 'utf8' });
}

test('an integration made in the console starts its template when a signed webhook reaches its copied alias URL', async ({
  page,
  context,
  baseURL,
}, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const { project, template } = await demoProject(api, unique(testInfo, 'Webhooks'));
  const secret = `s3cret-${Date.now()}`;
  await loginPasswordKey(api, project.id, 'Webhook secret', secret);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  await useSession(page, api);
  const name = unique(testInfo, 'Deploy on push');

  // The integration, through its dialog: HMAC with the key's password.
  await page.goto(`/project/${project.id}/integrations`);
  await page.getByRole('button', { name: 'New Integration' }).click();
  const dialog = page.getByRole('dialog', { name: 'New Integration' });
  await dialog.getByRole('textbox', { name: 'Name' }).fill(name);
  await dialog.getByRole('combobox', { name: 'Template' }).selectOption({ label: template.name });
  await expect(dialog.getByRole('combobox', { name: 'Auth secret' })).toHaveCount(0);
  await dialog.getByRole('combobox', { name: 'Auth method' }).selectOption({ label: 'HMAC' });
  await dialog.getByRole('combobox', { name: 'Auth secret' }).selectOption({ label: 'Webhook secret' });
  await dialog.getByRole('textbox', { name: 'Auth header' }).fill('X-Bastion-Signature');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog).toBeHidden();
  const row = page.getByRole('row', { name: new RegExp(name) });
  await expect(row.getByRole('link', { name: template.name })).toHaveAttribute('href', `/project/${project.id}/templates/${template.id}`);
  await row.getByRole('link', { name }).click();
  await expect(page).toHaveURL(/\/integration\/\d+$/);
  const integrationId = Number(/\/integration\/(\d+)$/.exec(page.url())![1]);
  await expect(page.getByRole('heading', { level: 1, name })).toBeVisible();

  // A matcher on the pushed branch.
  await page.getByRole('button', { name: 'New Matcher' }).click();
  const matcher = page.getByRole('dialog', { name: 'New Matcher' });
  await matcher.getByRole('textbox', { name: 'Name' }).fill('Main branch');
  await matcher.getByRole('combobox', { name: 'Match type' }).selectOption({ label: 'Body' });
  await matcher.getByRole('combobox', { name: 'Body data type' }).selectOption({ label: 'JSON' });
  await matcher.getByRole('textbox', { name: 'Key' }).fill('ref');
  await matcher.getByRole('combobox', { name: 'Method' }).selectOption({ label: 'Equals' });
  await matcher.getByRole('textbox', { name: 'Value' }).fill('refs/heads/main');
  await matcher.getByRole('button', { name: 'Create' }).click();
  await expect(matcher).toBeHidden();
  await expect(page.getByRole('grid', { name: 'Matchers' }).getByRole('row', { name: /Main branch/ })).toContainText('refs/heads/main');

  // An extracted value: the pushed commit becomes a variable of the task.
  await page.getByRole('button', { name: 'New Extracted Value' }).click();
  const value = page.getByRole('dialog', { name: 'New Extracted Value' });
  await value.getByRole('textbox', { name: 'Name' }).fill('Commit');
  await value.getByRole('combobox', { name: 'Value source' }).selectOption({ label: 'Body' });
  await value.getByRole('combobox', { name: 'Body data type' }).selectOption({ label: 'JSON' });
  await value.getByRole('textbox', { name: 'Key' }).fill('head_commit.id');
  await value.getByRole('textbox', { name: 'Environment variable' }).fill('PUSHED_COMMIT');
  await value.getByRole('button', { name: 'Create' }).click();
  await expect(value).toBeHidden();
  await expect(page.getByRole('grid', { name: 'Extracted values' }).getByRole('row', { name: /Commit/ })).toContainText('PUSHED_COMMIT');

  // Its alias, copied from the console.
  await page.getByRole('button', { name: 'Add Alias' }).click();
  const copy = page.getByRole('button', { name: /^Copy the URL / });
  await expect(copy).toBeVisible();
  const shownUrl = (await page.getByRole('list', { name: 'Aliases' }).locator('code').textContent())!;
  expect(shownUrl).toMatch(aliasPattern);
  await copy.click();
  await expect(page.getByText('The alias URL has been copied to the clipboard.')).toBeVisible();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toBe(shownUrl);
  expect(copied.startsWith(baseURL!)).toBe(true);

  // The webhook: a wrong signature is refused, the right one starts a task.
  const commit = `c0ffee${Date.now().toString(16)}`;
  const body = JSON.stringify({ ref: 'refs/heads/main', head_commit: { id: commit } });
  const signature = createHmac('sha256', secret).update(body).digest('hex');
  expect(curlWebhook(copied, body, { 'X-Bastion-Signature': '0'.repeat(64) })).toBe('401');
  expect(curlWebhook(copied, body, { 'X-Bastion-Signature': signature })).toBe('204');

  // The task, as the server records it: started by this integration, with the extracted value.
  type ListedTask = { id: number; template_id: number; integration_id: number | null; environment: string };
  let started: ListedTask | undefined;
  await expect
    .poll(async () => {
      const tasks = (await (await api.get(`/api/project/${project.id}/tasks/last`)).json()) as ListedTask[];
      started = tasks.find((t) => t.integration_id === integrationId);
      return started && { template_id: started.template_id, environment: JSON.parse(started.environment || '{}') };
    })
    .toEqual({ template_id: template.id, environment: expect.objectContaining({ PUSHED_COMMIT: commit }) });

  // And in History, where people look for it.
  await page.goto(`/project/${project.id}/history`);
  await expect(page.getByRole('heading', { name: 'History' })).toBeVisible();
  const taskRow = page.getByRole('row').filter({ has: page.getByRole('button', { name: `Open the log of task ${started!.id}` }) });
  await expect(taskRow).toContainText(template.name);
});

test('the searchable checkbox saves at once, and an integration is deleted only after confirmation', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'Hooks'));
  const integration = await created<{ id: number; name: string }>(
    await api.post(`/api/project/${project.id}/integrations`, { data: { name: 'Nightly', auth_method: '' } }),
  );
  await useSession(page, api);
  await page.goto(`/project/${project.id}/integration/${integration.id}`);
  await expect(page.getByRole('navigation', { name: 'Breadcrumb' })).toContainText('Nightly');
  // The save is awaited by its response, so that a failure says why (it
  // failed once in CI with no trace of the PUT's answer).
  const saved = page.waitForResponse(
    (r) => r.request().method() === 'PUT' && r.url().endsWith(`/api/project/${project.id}/integrations/${integration.id}`),
  );
  // click, not check: check() throws at once when the box does not stay
  // checked (the console puts it back when the PUT fails), before the
  // PUT's answer below could say why. It failed that way once.
  await page.getByRole('checkbox', { name: 'Available by project and global alias' }).click();
  const answer = await saved;
  const why = answer.status() === 204 ? '' : await answer.text().catch(() => '');
  expect(answer.status(), `PUT answered ${answer.status()} ${why}`).toBe(204);
  expect(JSON.parse(answer.request().postData() ?? '{}')).toMatchObject({ id: integration.id, searchable: true });
  await expect
    .poll(async () => ((await (await api.get(`/api/project/${project.id}/integrations/${integration.id}`)).json()) as { searchable: boolean }).searchable)
    .toBe(true);
  await expect(page.getByRole('checkbox', { name: 'Available by project and global alias' })).toBeChecked();

  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Integrations' }).click();
  await page.getByRole('button', { name: 'Delete Nightly' }).click();
  const confirm = page.getByRole('dialog');
  await expect(confirm).toContainText('Are you sure you want to delete this Integration?');
  await confirm.getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByText('No integrations yet')).toBeVisible();
  expect((await api.get(`/api/project/${project.id}/integrations/${integration.id}`)).status()).toBe(404);
});

test('a guest sees no integration write buttons and no alias, and the server refuses its matcher in the form', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'Guest hooks'));
  const integration = await created<{ id: number }>(
    await api.post(`/api/project/${project.id}/integrations`, { data: { name: 'Release', auth_method: '' } }),
  );
  await created(await api.post(`/api/project/${project.id}/integrations/${integration.id}/aliases`));
  await created(await api.post(`/api/project/${project.id}/integrations/aliases`));
  const guest = await createUser(api, unique(testInfo, 'guest'));
  await addMember(api, project.id, guest.id, 'guest');
  await useSession(page, await apiAs(baseURL!, guest.username, guest.password));

  // Alias URLs are credentials (issue #19): a line says so instead.
  const hidden = 'Alias URLs are shown only to those who may change integrations.';
  await page.goto(`/project/${project.id}/integrations`);
  await expect(page.getByRole('link', { name: 'Release' })).toBeVisible();
  await expect(page.getByText(hidden)).toBeVisible();
  await expect(page.getByRole('button', { name: /^Copy the URL / })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'New Integration' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: /^(Edit|Delete) / })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Add Alias' })).toHaveCount(0);

  await page.getByRole('link', { name: 'Release' }).click();
  await expect(page.getByText(hidden)).toBeVisible();
  await expect(page.getByRole('button', { name: /^Copy the URL / })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Add Alias' })).toHaveCount(0);
  await expect(page.getByRole('checkbox', { name: 'Available by project and global alias' })).toBeDisabled();

  // docs/features.md §6 keeps the matcher actions in the console; the server refuses
  // the write (updateProject, issue #19) and the form shows why.
  await page.getByRole('button', { name: 'New Matcher' }).click();
  const matcher = page.getByRole('dialog', { name: 'New Matcher' });
  await matcher.getByRole('textbox', { name: 'Name' }).fill('Tag');
  await matcher.getByRole('combobox', { name: 'Match type' }).selectOption({ label: 'Header' });
  await matcher.getByRole('textbox', { name: 'Key' }).fill('X-Event');
  await matcher.getByRole('combobox', { name: 'Method' }).selectOption({ label: 'Contains' });
  await matcher.getByRole('textbox', { name: 'Value' }).fill('tag');
  await matcher.getByRole('button', { name: 'Create' }).click();
  await expect(matcher.getByTestId('save-error')).toHaveText(/you need the updateProject permission in this project/);
  await matcher.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByRole('grid', { name: 'Matchers' }).getByRole('row', { name: /Tag/ })).toHaveCount(0);
});

async function inTheme(page: Page, theme: (typeof themes)[number], path: string) {
  await page.evaluate((dark) => window.localStorage.setItem('darkMode', dark ? '1' : '0'), theme === 'dark');
  await page.goto(path);
}

async function shoot(page: Page, testInfo: TestInfo, name: string, theme: string) {
  await screenshot(page, testInfo, `integrations-${name}-${theme}`);
}

test('screens of integrations: the list, the detail and its dialogs, light and dark', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const { project, template } = await demoProject(api, unique(testInfo, 'Integration screens'));
  const key = await loginPasswordKey(api, project.id, 'GitHub secret', 'pw');
  const integration = await created<{ id: number }>(
    await api.post(`/api/project/${project.id}/integrations`, {
      data: { name: 'Deploy on push', template_id: template.id, auth_method: 'github', auth_secret_id: key.id, searchable: true },
    }),
  );
  await created(await api.post(`/api/project/${project.id}/integrations`, { data: { name: 'Nightly rebuild', auth_method: '' } }));
  const base = `/api/project/${project.id}/integrations/${integration.id}`;
  await created(await api.post(`${base}/aliases`));
  await created(await api.post(`/api/project/${project.id}/integrations/aliases`));
  await created(await api.post(`${base}/matchers`, {
    data: { name: 'Main branch', match_type: 'body', body_data_type: 'json', key: 'ref', method: 'equals', value: 'refs/heads/main', integration_id: integration.id },
  }));
  await created(await api.post(`${base}/matchers`, {
    data: { name: 'Push event', match_type: 'header', key: 'X-GitHub-Event', method: 'equals', value: 'push', integration_id: integration.id },
  }));
  await created(await api.post(`${base}/values`, {
    data: { name: 'Commit', value_source: 'body', body_data_type: 'json', key: 'head_commit.id', variable: 'PUSHED_COMMIT', integration_id: integration.id },
  }));
  await useSession(page, api);
  await page.goto('/');

  for (const theme of themes) {
    await inTheme(page, theme, `/project/${project.id}/integrations`);
    await expect(page.getByRole('link', { name: 'Nightly rebuild' })).toBeVisible();
    await expect(page.getByRole('button', { name: 'Add Alias' })).toBeEnabled();
    await shoot(page, testInfo, 'list', theme);
    await page.getByRole('button', { name: 'Edit Deploy on push' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Integration' });
    await edit.getByRole('combobox', { name: 'Auth method' }).selectOption({ label: 'HMAC' });
    await expect(edit.getByRole('textbox', { name: 'Auth header' })).toBeVisible();
    expect((await edit.boundingBox())!.width).toBeLessThanOrEqual(450);
    await shoot(page, testInfo, 'integration-dialog', theme);
    await edit.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Delete Nightly rebuild' }).click();
    await expect(page.getByRole('dialog')).toContainText('Are you sure you want to delete this Integration?');
    await shoot(page, testInfo, 'delete-dialog', theme);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

    await inTheme(page, theme, `/project/${project.id}/integration/${integration.id}`);
    await expect(page.getByRole('grid', { name: 'Matchers' })).toContainText('N/A');
    await expect(page.getByRole('button', { name: /^Copy the URL / })).toBeVisible();
    await shoot(page, testInfo, 'detail', theme);
    await page.getByRole('button', { name: 'New Matcher' }).click();
    const matcher = page.getByRole('dialog', { name: 'New Matcher' });
    await matcher.getByRole('combobox', { name: 'Match type' }).selectOption({ label: 'Body' });
    await matcher.getByRole('button', { name: 'Create' }).click();
    await expect(matcher.getByText('Body data type is required')).toBeVisible();
    expect((await matcher.boundingBox())!.width).toBeLessThanOrEqual(450);
    await shoot(page, testInfo, 'matcher-dialog', theme);
    await matcher.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Edit Commit' }).click();
    const value = page.getByRole('dialog', { name: 'Edit Extracted Value' });
    await expect(value.getByRole('textbox', { name: 'Environment variable' })).toHaveValue('PUSHED_COMMIT');
    expect((await value.boundingBox())!.width).toBeLessThanOrEqual(450);
    await shoot(page, testInfo, 'value-dialog', theme);
    await value.getByRole('button', { name: 'Cancel' }).click();
  }
});
