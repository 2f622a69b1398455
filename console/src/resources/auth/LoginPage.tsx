import { useState, type FormEvent } from 'react';
import {
  ActionGroup,
  Alert,
  Bullseye,
  Button,
  Divider,
  Form,
  Spinner,
  Stack,
  StackItem,
  Title,
} from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { Navigate, useLocation } from 'react-router-dom';
import { ApiError } from '../../api/client';
import { errorMessage } from '../../api/errors';
import { PRODUCT_NAME } from '../../app/brand';
import { hasSessionCookie } from '../../app/session';
import { FormDisabledContext, TextField } from '../../components/FormFields';
import { useLazyValidation } from '../../components/useLazyValidation';
import { LoginHelpDialog } from './LoginHelpDialog';
import { OidcButton } from './OidcButton';
import { useLogin, useLoginOptions } from './useLogin';
import { validateCredentials } from './validation';
import './LoginPage.css';

/** Sign in (docs/features.md §2, /auth/login). */
export function LoginPage() {
  const { search } = useLocation();
  if (hasSessionCookie()) return <Navigate to={`/${search}`} replace />;
  return <LoginScreen search={search} />;
}

function LoginScreen({ search }: { search: string }) {
  const { t } = useTranslation('auth');
  const options = useLoginOptions();
  const [helpOpen, setHelpOpen] = useState(false);

  return (
    <Bullseye className="bastion-login">
      <div className="bastion-login__panel">
        <Stack hasGutter>
          <Title headingLevel="h1" size="2xl">
            {PRODUCT_NAME}
          </Title>
          {options.isPending && <Spinner aria-label={t('Loading')} />}
          {options.isError && <Alert variant="danger" isInline title={errorMessage(options.error)} />}
          {/* Without the options, offer the password form: it is the usual way in. */}
          {(options.data?.login_with_password ?? options.isError) && (
            <StackItem>
              <PasswordForm search={search} />
            </StackItem>
          )}
          {(options.data?.oidc_providers ?? []).length > 0 && (
            <>
              {options.data?.login_with_password && <Divider />}
              {options.data?.oidc_providers.map((provider) => (
                <OidcButton key={provider.id} provider={provider} search={search} />
              ))}
            </>
          )}
          <Button variant="link" isInline onClick={() => setHelpOpen(true)}>
            {t("Don't have an account or can't sign in?")}
          </Button>
        </Stack>
      </div>
      {helpOpen && <LoginHelpDialog isOpen onClose={() => setHelpOpen(false)} />}
    </Bullseye>
  );
}

function PasswordForm({ search }: { search: string }) {
  const { t } = useTranslation('auth');
  const login = useLogin();
  const [credentials, setCredentials] = useState({ auth: '', password: '' });
  const { errors, check } = useLazyValidation(credentials, validateCredentials);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!check() || login.isPending) return;
    login.mutate(credentials, {
      // A full load, so nothing of a previous session survives.
      onSuccess: () => window.location.assign(`/${search}`),
    });
  };
  const failure =
    login.error instanceof ApiError && login.error.status === 401
      ? t('Incorrect login or password')
      : login.error && errorMessage(login.error);

  return (
    <Form onSubmit={submit} noValidate>
      {failure && <Alert variant="danger" isInline title={failure} data-testid="login-error" />}
      <FormDisabledContext.Provider value={login.isPending}>
        <TextField
          id="auth"
          label={t('Username')}
          value={credentials.auth}
          onChange={(auth) => setCredentials((c) => ({ ...c, auth }))}
          error={errors.auth}
          autoComplete="username"
          autoFocus
          isRequired
        />
        <TextField
          id="password"
          label={t('Password')}
          type="password"
          value={credentials.password}
          onChange={(password) => setCredentials((c) => ({ ...c, password }))}
          error={errors.password}
          autoComplete="current-password"
          isRequired
        />
      </FormDisabledContext.Provider>
      <ActionGroup>
        <Button type="submit" variant="primary" isBlock isLoading={login.isPending} isDisabled={login.isPending}>
          {t('Sign in')}
        </Button>
      </ActionGroup>
    </Form>
  );
}
