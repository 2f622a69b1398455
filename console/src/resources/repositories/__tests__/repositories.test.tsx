import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, alice, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { RepositoriesPage } from '../RepositoriesPage';
import { validateRepository } from '../validation';

const infra = project(1, 'Infra');
const keys = [
  { id: 7, name: 'deploy key', type: 'ssh', project_id: 1, empty: false },
  { id: 8, name: 'none', type: 'none', project_id: 1, empty: true },
];
const repositories = [
  { id: 1, name: 'site', project_id: 1, git_url: 'git@github.com:org/site.git', git_branch: 'main', ssh_key_id: 7 },
  { id: 2, name: 'local copy', project_id: 1, git_url: '/srv/repos/site', git_branch: 'ignored', ssh_key_id: 8 },
];
const lists = {
  'GET /project/1/repositories': [200, repositories] as [number, unknown],
  'GET /project/1/keys': [200, keys] as [number, unknown],
};

function renderPage(permissions: number, user = admin) {
  return renderWithProviders(inProject(<RepositoriesPage />, infra, user, permissions ? 'manager' : 'guest', permissions), { user });
}

describe('repository validation (spec §5)', () => {
  const valid = { name: 'site', gitUrl: 'https://github.com/org/site.git', gitBranch: 'main', sshKeyId: '7' };

  it('passes a complete repository', () => {
    expect(validateRepository(valid)).toEqual({});
  });

  it('requires name, URL, branch and access key', () => {
    expect(validateRepository({ name: ' ', gitUrl: '', gitBranch: '', sshKeyId: '' })).toEqual({
      name: 'Name is required',
      gitUrl: 'Repository is required',
      gitBranch: 'Branch is required',
      sshKeyId: 'Key is required',
    });
  });

  it('says "Incorrect URL" for an unrecognised scheme', () => {
    expect(validateRepository({ ...valid, gitUrl: 'http://github.com/org/site.git' }).gitUrl).toBe('Incorrect URL');
    expect(validateRepository({ ...valid, gitUrl: 'ftp://host/site' }).gitUrl).toBe('Incorrect URL');
  });

  it('needs no branch for a local path', () => {
    expect(validateRepository({ ...valid, gitUrl: '/srv/repos/site', gitBranch: '' })).toEqual({});
  });
});

describe('the repositories screen (spec §2)', () => {
  it('lists name, git URL with its branch unless local, and the key name', async () => {
    stubApi(lists);
    renderPage(5);
    const site = (await screen.findByText('site')).closest('tr')!;
    expect(within(site).getByText('git@github.com:org/site.git')).toBeInTheDocument();
    expect(within(site).getByText('main')).toBeInTheDocument();
    expect(await within(site).findByText('deploy key')).toBeInTheDocument();
    const local = screen.getByText('local copy').closest('tr')!;
    expect(within(local).getByText('/srv/repos/site')).toBeInTheDocument();
    expect(within(local).queryByText('ignored')).not.toBeInTheDocument();
    expect(within(site).getByRole('button', { name: 'Edit site' })).toBeInTheDocument();
    expect(within(site).getByRole('button', { name: 'Delete site' })).toBeInTheDocument();
  });

  it('shows all 30 rows of a long list, with no pager', async () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ ...repositories[0], id: 100 + i, name: `repo ${i}` }));
    stubApi({ ...lists, 'GET /project/1/repositories': [200, many] });
    renderPage(5);
    await screen.findByText('repo 29');
    expect(screen.getAllByRole('row')).toHaveLength(31);
    expect(document.querySelector('.pf-v6-c-pagination')).toBeNull();
  });

  it('offers New Repository, edit and delete only with manageProjectResources', async () => {
    stubApi(lists);
    renderPage(1, alice);
    await screen.findByText('site');
    expect(screen.queryByRole('button', { name: 'New Repository' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^(Edit|Delete) / })).not.toBeInTheDocument();
  });

  it('says so when there are none yet', async () => {
    stubApi({ ...lists, 'GET /project/1/repositories': [200, []] });
    renderPage(5);
    expect(await screen.findByText('No repositories yet')).toBeInTheDocument();
  });

  it('shows the derived message when the list fails', async () => {
    stubApi({ ...lists, 'GET /project/1/repositories': [500, { error: 'the cache is not ready' }] });
    renderPage(5);
    expect(await screen.findByText('The repositories could not be loaded')).toBeInTheDocument();
    expect(screen.getByText('the cache is not ready')).toBeInTheDocument();
  });
});

describe('the repository dialog', () => {
  async function openNew() {
    const api = stubApi({ ...lists, 'POST /project/1/repositories': [204] });
    renderPage(5);
    fireEvent.click(await screen.findByRole('button', { name: 'New Repository' }));
    await screen.findByRole('dialog');
    return api;
  }
  const url = () => screen.getByRole('textbox', { name: /URL or path/ });
  const chip = (name: string) => screen.getByRole('button', { name });

  it('rewrites the URL prefix with the type chips, and presses the chip of the current type', async () => {
    await openNew();
    fireEvent.change(url(), { target: { value: 'git@github.com:org/site.git' } });
    expect(chip('ssh')).toHaveAttribute('aria-pressed', 'true');
    fireEvent.click(chip('https'));
    expect(url()).toHaveValue('https://git@github.com/org/site.git');
    expect(chip('https')).toHaveAttribute('aria-pressed', 'true');
    fireEvent.click(chip('local'));
    expect(url()).toHaveValue('/git@github.com/org/site.git');
    fireEvent.click(chip('file'));
    expect(url()).toHaveValue('file:///git@github.com/org/site.git');
    fireEvent.click(chip('git'));
    expect(url()).toHaveValue('git://git@github.com/org/site.git');
  });

  it('disables the branch for a local path', async () => {
    await openNew();
    const branch = screen.getByRole('textbox', { name: /Branch/ });
    expect(branch).toBeEnabled();
    fireEvent.click(chip('local'));
    expect(url()).toHaveValue('/');
    expect(branch).toBeDisabled();
  });

  it('shows every message and makes no call when the form is incomplete', async () => {
    const api = await openNew();
    fireEvent.click(screen.getByRole('button', { name: 'Create' }));
    const dialog = screen.getByRole('dialog');
    for (const message of ['Name is required', 'Repository is required', 'Branch is required', 'Key is required']) {
      expect(within(dialog).getByText(message)).toBeInTheDocument();
    }
    fireEvent.change(url(), { target: { value: 'http://github.com/org/site.git' } });
    expect(within(dialog).getByText('Incorrect URL')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);
  });

  it('says nothing before the first save, then follows the input (spec §5: lazy validation)', async () => {
    await openNew();
    const dialog = screen.getByRole('dialog');
    fireEvent.change(url(), { target: { value: 'http://github.com/org/site.git' } });
    fireEvent.change(url(), { target: { value: '' } });
    expect(within(dialog).queryByText(/is required|Incorrect URL/)).not.toBeInTheDocument();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(within(dialog).getByText('Name is required')).toBeInTheDocument();
    fireEvent.change(within(dialog).getByRole('textbox', { name: /^Name/ }), { target: { value: 'site' } });
    expect(within(dialog).queryByText('Name is required')).not.toBeInTheDocument();
  });

  it('disables every input while saving (spec §4)', async () => {
    await openNew();
    // The save never answers: the form stays in its saving state.
    const answering = globalThis.fetch;
    vi.stubGlobal('fetch', (input: RequestInfo | URL, init?: RequestInit) =>
      init?.method === 'POST' ? new Promise<Response>(() => {}) : answering(input, init),
    );
    const dialog = screen.getByRole('dialog');
    fireEvent.change(within(dialog).getByRole('textbox', { name: /^Name/ }), { target: { value: 'site' } });
    fireEvent.change(url(), { target: { value: '/srv/repos/site' } });
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Access Key' }), { target: { value: '7' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(within(dialog).getByRole('textbox', { name: /^Name/ })).toBeDisabled());
    expect(url()).toBeDisabled();
    expect(within(dialog).getByRole('combobox', { name: 'Access Key' })).toBeDisabled();
    expect(within(dialog).getByRole('button', { name: 'Cancel' })).toBeDisabled();
  });

  it('creates the repository with POST and closes', async () => {
    const api = await openNew();
    fireEvent.change(screen.getByRole('textbox', { name: /^Name/ }), { target: { value: 'site' } });
    fireEvent.change(url(), { target: { value: '/srv/repos/site' } });
    fireEvent.change(screen.getByRole('combobox', { name: 'Access Key' }), { target: { value: '7' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(api.writes()).toEqual([
      {
        method: 'POST',
        path: '/project/1/repositories',
        body: { project_id: 1, name: 'site', git_url: '/srv/repos/site', git_branch: '', ssh_key_id: 7 },
      },
    ]);
  });

  it('edits with PUT and shows the server message in the form when it fails', async () => {
    const api = stubApi({ ...lists, 'PUT /project/1/repositories/1': [400, { error: 'the branch is not a valid git branch name' }] });
    renderPage(5);
    fireEvent.click(await screen.findByRole('button', { name: 'Edit site' }));
    const branch = await screen.findByRole('textbox', { name: /Branch/ });
    expect(branch).toHaveValue('main');
    fireEvent.change(branch, { target: { value: 'release' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByTestId('save-error')).toHaveTextContent('the branch is not a valid git branch name');
    expect(api.writes()[0]).toMatchObject({ method: 'PUT', path: '/project/1/repositories/1', body: { id: 1, git_branch: 'release' } });
  });
});
