import { useState } from 'react';
import { ClipboardCopy, Content, Modal, ModalBody, ModalHeader, Stack } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { randomPassword } from './randomPassword';

/** What a command does, then the command, ready to copy. */
function Step({ text, command }: { text: string; command: string }) {
  const { t } = useTranslation('auth');
  return (
    <div>
      <Content component="p" className="pf-v6-u-mb-xs">
        {text}
      </Content>
      <ClipboardCopy isReadOnly isCode hoverTip={t('Copy')} clickTip={t('Copied')}>
        {command}
      </ClipboardCopy>
    </div>
  );
}

/**
 * "Don't have an account or can't sign in?" (docs/features.md §1, §2): accounts are the
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
        <Stack hasGutter>
          <Content component="p">
            {t(
              'Accounts are managed by the administrator of this server with the bastion command-line tool, where Bastion runs. Ask them to run one of these commands.',
            )}
          </Content>
          <Step text={t('List the users:')} command="bastion user list" />
          <Step
            text={t('Set a new password for a user, by username or email:')}
            command={`bastion user change-by-login --login jane --password ${password}`}
          />
          <Step
            text={t('Create a new administrator:')}
            command={`bastion user add --admin --login jane --name "Jane Doe" --email jane@example.com --password ${password}`}
          />
          <Content component="p">
            {t(
              'Add --kubeconfig to reach the cluster where Bastion runs, or --data-dir for a server started with bastion dev.',
            )}
          </Content>
        </Stack>
      </ModalBody>
    </Modal>
  );
}
