import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, alice, project } from '../../../test/fixtures';
import { renderWithProviders } from '../../../test/render';
import { ProjectFrame } from '../../ProjectFrame';
import { lastProject } from '../../../settings/settings';

const projects = [project(1, 'Demo Project'), project(2, 'ops', 'other'), project(3, 'Web servers'), project(4, 'four'), project(5, 'five')];

function renderDrawer(path: string, user = admin, permissions = 15) {
  stubApi({
    'GET /projects': [200, projects],
    'GET /project/1/role': [200, { role: 'owner', permissions }],
    'GET /project/2/role': [200, { role: 'owner', permissions }],
  });
  return renderWithProviders(
    <ProjectFrame>
      <div />
    </ProjectFrame>,
    { path, route: '/project/:projectId/*', user },
  );
}

const navLinks = async () =>
  within(await screen.findByRole('navigation', { name: 'Project' }))
    .getAllByRole('link')
    .map((a) => a.textContent);

describe('the drawer (docs/features.md §2)', () => {
  it('links every page of a normal project', async () => {
    renderDrawer('/project/1/history');
    await waitFor(async () =>
      expect(await navLinks()).toEqual([
        'History', 'Activity', 'Task Templates', 'Inventory', 'Environment', 'Key Store', 'Repositories',
        'Integrations', 'Team', 'Settings',
      ]),
    );
  });

  it('leaves out resource pages for other project types, and Settings without updateProject', async () => {
    renderDrawer('/project/2/activity', alice, 1);
    await waitFor(async () => expect(await navLinks()).toEqual(['Activity', 'Team']));
  });

  it('switches projects, each with its coloured initials', async () => {
    renderDrawer('/project/1/history');
    const switcher = await screen.findByTestId('project-switcher');
    await waitFor(() => expect(switcher).toHaveTextContent('DPDemo Project'));
    fireEvent.click(switcher);
    const items = await screen.findAllByRole('menuitem');
    const avatars = items.slice(0, 5).map((item) => item.querySelector('[data-color]'));
    // Listed by name: Demo Project, five, four, ops, Web servers.
    expect(avatars.map((a) => a?.textContent)).toEqual(['DP', 'F', 'F', 'O', 'WS']);
    expect(avatars.map((a) => a?.getAttribute('data-color'))).toEqual(['red', 'blue', 'orange', 'green', 'red']);
    fireEvent.click(screen.getByRole('menuitem', { name: /Web servers/ }));
    expect(lastProject()).toBe(3); // the base page opens it from now on
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/project/3/history'));
  });

  it('offers New project and Restore project only to those who may create projects', async () => {
    renderDrawer('/project/1/history', { ...alice, can_create_project: false });
    fireEvent.click(await screen.findByTestId('project-switcher'));
    await screen.findAllByRole('menuitem');
    expect(screen.queryByRole('menuitem', { name: 'New project' })).not.toBeInTheDocument();
    expect(screen.queryByRole('menuitem', { name: 'Restore project' })).not.toBeInTheDocument();
  });

  it('offers New project, opening /project/new, and Restore project to a non-admin with can_create_project', async () => {
    renderDrawer('/project/1/history', { ...alice, admin: false, can_create_project: true });
    fireEvent.click(await screen.findByTestId('project-switcher'));
    expect(await screen.findByRole('menuitem', { name: 'Restore project' })).toBeInTheDocument();
    fireEvent.click(screen.getByRole('menuitem', { name: 'New project' }));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/project\/new$/));
  });

  it('has the version, Users for admins, edit account and sign out in the user menu', async () => {
    renderDrawer('/project/1/history');
    fireEvent.click(await screen.findByTestId('user-menu'));
    expect(await screen.findByText('Version v1.2.3')).toBeInTheDocument();
    for (const name of ['Users', 'Edit account', 'Change password', 'Sign out']) {
      expect(screen.getByRole('menuitem', { name })).toBeInTheDocument();
    }
  });

  it('offers to link each single sign-on provider to a password account, never to an external one', async () => {
    renderDrawer('/project/1/history', alice);
    stubApi({
      'GET /projects': [200, projects],
      'GET /project/1/role': [200, { role: 'owner', permissions: 15 }],
      'GET /auth/login': [200, { oidc_providers: [{ id: 'corp', name: 'Corp SSO' }], login_with_password: true }],
    });
    fireEvent.click(await screen.findByTestId('user-menu'));
    expect(await screen.findByRole('menuitem', { name: 'Link sign-in with Corp SSO' })).toBeInTheDocument();
  });

  it('offers no link to an external user, whose sign-in is its provider', async () => {
    const { calls } = stubApi({
      'GET /projects': [200, projects],
      'GET /project/1/role': [200, { role: 'owner', permissions: 15 }],
      'GET /auth/login': [200, { oidc_providers: [{ id: 'corp', name: 'Corp SSO' }], login_with_password: true }],
    });
    renderWithProviders(
      <ProjectFrame>
        <div />
      </ProjectFrame>,
      { path: '/project/1/history', route: '/project/:projectId/*', user: { ...alice, external: true } },
    );
    fireEvent.click(await screen.findByTestId('user-menu'));
    await screen.findByText('Version v1.2.3');
    expect(screen.queryByRole('menuitem', { name: /Link sign-in/ })).not.toBeInTheDocument();
    expect(calls.some((c) => c.path === '/auth/login')).toBe(false);
  });

  it('has no Users entry for others', async () => {
    renderDrawer('/project/1/history', alice);
    fireEvent.click(await screen.findByTestId('user-menu'));
    await screen.findByText('Version v1.2.3');
    expect(screen.queryByRole('menuitem', { name: 'Users' })).not.toBeInTheDocument();
  });
});
