import AnsibleTowerIcon from '@patternfly/react-icons/dist/esm/icons/ansible-tower-icon';
import TerminalIcon from '@patternfly/react-icons/dist/esm/icons/terminal-icon';
import { useTranslation } from 'react-i18next';

/** The English title of a template's app ("" is ansible, the default: docs/features.md §2). */
export function appTitle(app: string): string {
  switch (app) {
    case '':
    case 'ansible':
      return 'Ansible Playbook';
    case 'terraform':
      return 'Terraform Code';
    case 'tofu':
      return 'OpenTofu Code';
    case 'bash':
      return 'Bash Script';
    default:
      return app;
  }
}

// Terraform's mark: four slanted blocks, in its purple (the colour GET /apps
// gives it), which reads on light and dark backgrounds alike.
function TerraformIcon() {
  return (
    <svg viewBox="0 0 64 64" width="1em" height="1em" aria-hidden fill="#7b42bc" style={{ verticalAlign: '-0.125em' }}>
      <path d="M22.2 11.5 39.7 21.6v20.2L22.2 31.7z" />
      <path d="M41.6 21.6v20.2l17.5-10.1V11.5z" />
      <path d="M2.8 0v20.2l17.5 10.1V10.1z" />
      <path d="M22.2 53.9 39.7 64V43.8L22.2 33.7z" />
    </svg>
  );
}

/** A template's app as a small icon with its title for screen readers. */
export function AppIcon({ app, decorative }: { app: string; decorative?: boolean }) {
  const { t } = useTranslation('templates');
  const title = t(appTitle(app));
  const icon = app === 'terraform' || app === 'tofu' ? <TerraformIcon /> : app === 'bash' ? <TerminalIcon /> : <AnsibleTowerIcon />;
  if (decorative) return <span aria-hidden style={{ display: 'inline-flex' }}>{icon}</span>;
  return (
    <span role="img" aria-label={title} title={title} data-app={app || 'ansible'} style={{ display: 'inline-flex' }}>
      {icon}
    </span>
  );
}
