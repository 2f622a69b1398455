import { useState } from 'react';
import { ClipboardCopy, Content, Modal, ModalBody, ModalHeader } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { randomPassword } from './randomPassword';

function Command({ children }: { children: string }) {
  const { t } = useTranslation('auth');
  return (
    <ClipboardCopy isReadOnly isCode hoverTip={t('Copy')} clickTip={t('Copied')}>
      {children}
    </ClipboardCopy>
  );
}

/**
 * "Don't have an account or can't sign in?" (spec §1, §2): accounts are the
 * operator's, made with the bastion command-line tool. The example password
 * is made in this browser, fresh each time the dialog opens.
 */
export function LoginHelpDialog({ isOpen, onClose }: { isOpen: boolean; onClose(): void }) {
  const { t } = useTranslation('auth');
  const [password] = useState(randomPassword);
  return (
    <Modal isOpen={isOpen} onClose={onClose} aria-labelledby="login-help-title" style={{ maxWidth: 600 }}>
      <ModalHeader title={t("Don't have an account or can't sign in?")} labelId="login-help-title" />
      <ModalBody>
        <Content>
          <p>
            {t(
              'Accounts are managed by the administrator of this server with the bastion command-line tool, where Bastion runs. Ask them to run one of these commands.',
            )}
          </p>
          <p>{t('List the users:')}</p>
        </Content>
        <Command>bastion user list</Command>
        <Content>
          <p>{t('Set a new password for a user, by username or email:')}</p>
        </Content>
        <Command>{`bastion user change-by-login --login jane --password ${password}`}</Command>
        <Content>
          <p>{t('Create a new administrator:')}</p>
        </Content>
        <Command>
          {`bastion user add --admin --login jane --name "Jane Doe" --email jane@example.com --password ${password}`}
        </Command>
        <Content>
          <p>
            {t(
              'Add --kubeconfig to reach the cluster where Bastion runs, or --data-dir for a server started with bastion dev.',
            )}
          </p>
        </Content>
      </ModalBody>
    </Modal>
  );
}
