import type { ComponentType } from 'react';
import { Button } from '@patternfly/react-core';
import GithubIcon from '@patternfly/react-icons/dist/esm/icons/github-icon';
import GitlabIcon from '@patternfly/react-icons/dist/esm/icons/gitlab-icon';
import GoogleIcon from '@patternfly/react-icons/dist/esm/icons/google-icon';
import MicrosoftIcon from '@patternfly/react-icons/dist/esm/icons/microsoft-icon';
import OpenidIcon from '@patternfly/react-icons/dist/esm/icons/openid-icon';
import { oidcLoginUrl, type OidcProvider } from './useLogin';

// Providers name their icon as Semaphore's configuration does ("github",
// "mdi-github"); an address is shown as an image.
const namedIcons: Record<string, ComponentType> = {
  github: GithubIcon,
  gitlab: GitlabIcon,
  google: GoogleIcon,
  microsoft: MicrosoftIcon,
  openid: OpenidIcon,
};

function ProviderIcon({ icon }: { icon?: string }) {
  if (!icon) return null;
  if (/^(https?:|data:image\/|\/)/.test(icon)) {
    return <img src={icon} alt="" width={16} height={16} />;
  }
  const Icon = namedIcons[icon.replace(/^mdi-/, '').toLowerCase()];
  return Icon ? <Icon /> : null;
}

/** One identity provider's sign-in button: a navigation, not a call (docs/features.md §7). */
export function OidcButton({ provider, search }: { provider: OidcProvider; search: string }) {
  return (
    <Button
      component="a"
      href={oidcLoginUrl(provider, search)}
      variant="secondary"
      isBlock
      icon={<ProviderIcon icon={provider.icon} />}
      style={provider.color ? { backgroundColor: provider.color, color: '#fff', borderColor: provider.color } : undefined}
    >
      {provider.name}
    </Button>
  );
}
