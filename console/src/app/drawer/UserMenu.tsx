import { useState } from 'react';
import { Divider, Dropdown, DropdownItem, DropdownList, MenuToggle } from '@patternfly/react-core';
import UserIcon from '@patternfly/react-icons/dist/esm/icons/user-icon';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router-dom';
import { displayVersion } from '../../api/useInfo';
import { oidcLinkUrl, useLoginOptions } from '../../resources/auth/useLogin';
import { AccountDialog, ChangePasswordDialog, Loading } from '../lazyPages';
import { useNotify } from '../Notifications';
import { useSession } from '../SessionContext';
import { signOut } from '../session';

/** The user menu (docs/features.md §2): version, Users (admins), edit account, sign out. */
export function UserMenu() {
  const { t } = useTranslation();
  const { user, info } = useSession();
  const navigate = useNavigate();
  const notify = useNotify();
  const [isOpen, setOpen] = useState(false);
  const [dialog, setDialog] = useState<'account' | 'password' | null>(null);
  // Read when the menu opens: a password user links single sign-on here.
  const providers = useLoginOptions(isOpen && !user.external).data?.oidc_providers ?? [];

  const pick = (action: () => void) => () => {
    setOpen(false);
    action();
  };

  return (
    <>
      <Dropdown
        isOpen={isOpen}
        onOpenChange={setOpen}
        popperProps={{ position: 'start', direction: 'up', width: 'trigger' }}
        toggle={(ref) => (
          <MenuToggle
            ref={ref}
            isFullWidth
            icon={<UserIcon />}
            isExpanded={isOpen}
            onClick={() => setOpen((open) => !open)}
            data-testid="user-menu"
          >
            {user.name || user.username}
          </MenuToggle>
        )}
      >
        <DropdownList>
          <DropdownItem isDisabled description={user.username} data-testid="app-version">
            {t('Version {{version}}', { version: displayVersion(info.version) })}
          </DropdownItem>
          <Divider component="li" />
          {user.admin && <DropdownItem onClick={pick(() => navigate('/users'))}>{t('Users')}</DropdownItem>}
          <DropdownItem onClick={pick(() => setDialog('account'))}>{t('Edit account')}</DropdownItem>
          {!user.external && (
            <DropdownItem onClick={pick(() => setDialog('password'))}>{t('Change password')}</DropdownItem>
          )}
          {!user.external &&
            providers.map((p) => (
              <DropdownItem key={p.id} onClick={pick(() => window.location.assign(oidcLinkUrl(p)))}>
                {t('Link sign-in with {{provider}}', { provider: p.name })}
              </DropdownItem>
            ))}
          <DropdownItem onClick={pick(() => void signOut().catch(notify.error))}>{t('Sign out')}</DropdownItem>
        </DropdownList>
      </Dropdown>
      <Loading>
        {dialog === 'account' && <AccountDialog onClose={() => setDialog(null)} />}
        {dialog === 'password' && <ChangePasswordDialog user={user} onClose={() => setDialog(null)} />}
      </Loading>
    </>
  );
}
