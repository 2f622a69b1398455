import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import GithubIcon from '@patternfly/react-icons/dist/esm/icons/github-icon';
import { describe, expect, it, vi } from 'vitest';
import { setSessionCookie, stubApi } from '../../../test/api';
import { renderWithProviders } from '../../../test/render';
import { LoginPage } from '../LoginPage';
import { randomPassword } from '../randomPassword';
import { validateCredentials } from '../validation';

const options = (login_with_password = true, oidc_providers: unknown[] = []) =>
  [200, { login_with_password, oidc_providers }] as [number, unknown];

function renderLogin(path = '/auth/login') {
  return renderWithProviders(<LoginPage />, { path, user: null });
}

async function fill(username: string, password: string) {
  fireEvent.change(await screen.findByLabelText(/Username/), { target: { value: username } });
  fireEvent.change(screen.getByLabelText(/Password/), { target: { value: password } });
}

describe('sign-in validation (spec §5)', () => {
  it('requires username and password', () => {
    expect(validateCredentials({ auth: ' ', password: '' })).toEqual({
      auth: 'Username is required',
      password: 'Password is required',
    });
    expect(validateCredentials({ auth: 'admin', password: 'x' })).toEqual({ auth: undefined, password: undefined });
  });
});

describe('the sign-in screen (spec §2)', () => {
  it('says what is missing on Sign in, and makes no call', async () => {
    const api = stubApi({ 'GET /auth/login': options() });
    renderLogin();
    fireEvent.click(await screen.findByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Username is required')).toBeInTheDocument();
    expect(screen.getByText('Password is required')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);
  });

  it('shows "Incorrect login or password" on a 401', async () => {
    stubApi({ 'GET /auth/login': options(), 'POST /auth/login': [401, { error: 'Incorrect login or password' }] });
    renderLogin();
    await fill('admin', 'wrong');
    fireEvent.submit(screen.getByLabelText(/Password/).closest('form')!);
    expect(await screen.findByTestId('login-error')).toHaveTextContent('Incorrect login or password');
  });

  it('shows the server message for other failures', async () => {
    stubApi({ 'GET /auth/login': options(), 'POST /auth/login': [429, { error: 'too many failed sign-ins' }] });
    renderLogin();
    await fill('admin', 'x');
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByTestId('login-error')).toHaveTextContent('too many failed sign-ins');
  });

  it('submits on Enter in the password field and reloads to the base page with the query string', async () => {
    const api = stubApi({ 'GET /auth/login': options(), 'POST /auth/login': [204] });
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign });
    renderLogin('/auth/login?t=12');
    await fill(' admin ', 'secret');
    // Enter in a text field submits its form: what the browser does for keydown Enter.
    fireEvent.submit(screen.getByLabelText(/Password/));
    await waitFor(() => expect(assign).toHaveBeenCalledWith('/?t=12'));
    expect(api.writes()).toEqual([{ method: 'POST', path: '/auth/login', body: { auth: 'admin', password: 'secret' } }]);
  });

  it('hides the password form when password sign-in is off, and offers each identity provider', async () => {
    stubApi({
      'GET /auth/login': options(false, [
        { id: 'github', name: 'GitHub', color: '#24292f', icon: 'github' },
        { id: 'corp sso', name: 'Corporate SSO' },
      ]),
    });
    renderLogin('/auth/login?t=3');
    const github = await screen.findByRole('link', { name: 'GitHub' });
    expect(github).toHaveAttribute('href', '/api/auth/oidc/github/login?t=3');
    expect(github).toHaveStyle({ backgroundColor: '#24292f' });
    expect(screen.getByRole('link', { name: 'Corporate SSO' })).toHaveAttribute('href', '/api/auth/oidc/corp%20sso/login?t=3');
    expect(screen.queryByRole('button', { name: 'Sign in' })).not.toBeInTheDocument();
  });

  it("shows a provider's icon, named or an image address, on a button in its colour", async () => {
    const githubPath = render(<GithubIcon />).container.querySelector('path')!.getAttribute('d');
    stubApi({
      'GET /auth/login': options(true, [
        { id: 'github', name: 'GitHub', color: '#24292f', icon: 'mdi-github' },
        { id: 'corp', name: 'Corporate SSO', color: '#0066cc', icon: 'https://sso.example.com/logo.png' },
        { id: 'plain', name: 'Plain' },
      ]),
    });
    renderLogin();
    const github = await screen.findByRole('link', { name: 'GitHub' });
    expect(github.querySelector('svg path')).toHaveAttribute('d', githubPath!);
    expect(github).toHaveStyle({ backgroundColor: '#24292f', borderColor: '#24292f' });
    const corp = screen.getByRole('link', { name: 'Corporate SSO' });
    expect(corp.querySelector('img')).toHaveAttribute('src', 'https://sso.example.com/logo.png');
    expect(corp).toHaveStyle({ backgroundColor: '#0066cc' });
    const plain = screen.getByRole('link', { name: 'Plain' });
    expect(plain.querySelector('svg, img')).toBeNull();
    expect(plain.style.backgroundColor).toBe('');
  });

  it('sends a user who has a session to the base page', async () => {
    setSessionCookie();
    stubApi({ 'GET /auth/login': options() });
    renderLogin('/auth/login?x=1');
    expect(screen.getByTestId('location')).toHaveTextContent('/?x=1');
  });

  it('opens the help with the bastion user commands and a 10-character example password', async () => {
    stubApi({ 'GET /auth/login': options() });
    renderLogin();
    fireEvent.click(await screen.findByRole('button', { name: "Don't have an account or can't sign in?" }));
    const dialog = await screen.findByRole('dialog');
    const commands = within(dialog)
      .getAllByRole('textbox')
      .map((box) => (box as HTMLInputElement).value);
    expect(commands[0]).toBe('bastion user list');
    expect(commands[1]).toMatch(/^bastion user change-by-login --login jane --password [A-Za-z0-9]{10}$/);
    expect(commands[2]).toMatch(/^bastion user add --admin .* --password [A-Za-z0-9]{10}$/);
    expect(dialog.closest('.pf-v6-c-modal-box') ?? dialog).toHaveStyle({ maxWidth: '600px' });
  });
});

describe('randomPassword', () => {
  it('is 10 alphanumeric characters, different each time', () => {
    const passwords = new Set(Array.from({ length: 50 }, () => randomPassword()));
    for (const password of passwords) expect(password).toMatch(/^[A-Za-z0-9]{10}$/);
    expect(passwords.size).toBe(50);
  });
});
