import type { AnchorHTMLAttributes } from 'react';
import {
  Masthead,
  MastheadBrand,
  MastheadContent,
  MastheadLogo,
  MastheadMain,
  Page,
  Toolbar,
  ToolbarContent,
  ToolbarItem,
} from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { Link, Route, Routes } from 'react-router-dom';
import { PRODUCT_NAME } from './brand';
import { HomePage } from './HomePage';
import './AppShell.css';

// Lets the brand link navigate inside the app instead of reloading the page.
function HomeLink(props: AnchorHTMLAttributes<HTMLAnchorElement>) {
  return <Link to="/" {...props} />;
}

/** Shows "v1.2.3" whether or not the server's version string has the "v". */
export function displayVersion(version: string): string {
  return version.startsWith('v') ? version : `v${version}`;
}

function AppMasthead({ version }: { version: string }) {
  const { t } = useTranslation();
  return (
    <Masthead>
      <MastheadMain>
        <MastheadBrand>
          <MastheadLogo component={HomeLink} className="bastion-brand">{PRODUCT_NAME}</MastheadLogo>
        </MastheadBrand>
      </MastheadMain>
      <MastheadContent>
        <Toolbar isFullHeight>
          <ToolbarContent>
            <ToolbarItem align={{ default: 'alignEnd' }}>
              <span data-testid="app-version" title={t('Version')}>
                {displayVersion(version)}
              </span>
            </ToolbarItem>
          </ToolbarContent>
        </Toolbar>
      </MastheadContent>
    </Masthead>
  );
}

/** The page frame around every screen once the console has started. */
export function AppShell({ version }: { version: string }) {
  return (
    <Page masthead={<AppMasthead version={version} />}>
      <Routes>
        {/* Every route shows the home page until the real screens exist. */}
        <Route path="*" element={<HomePage />} />
      </Routes>
    </Page>
  );
}
