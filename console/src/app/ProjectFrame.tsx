import { useState, type ReactNode } from 'react';
import {
  Masthead,
  MastheadBrand,
  MastheadLogo,
  MastheadMain,
  MastheadToggle,
  Page,
  PageSidebar,
  PageToggleButton,
} from '@patternfly/react-core';
import BarsIcon from '@patternfly/react-icons/dist/esm/icons/bars-icon';
import { useTranslation } from 'react-i18next';
import { useParams } from 'react-router-dom';
import { PRODUCT_NAME } from './brand';
import { Drawer } from './drawer/Drawer';
import { desktopQuery, useMediaQuery } from './useMediaQuery';
import './ProjectFrame.css';

const measurePage = () => undefined;

/**
 * The frame of every page under /project/ (docs/features.md §2): a 260-pixel drawer,
 * fixed from 960 pixels up and opened with a toggle below.
 */
export function ProjectFrame({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  const isDesktop = useMediaQuery(desktopQuery);
  const [mobileOpen, setMobileOpen] = useState(false);
  const { projectId } = useParams();
  const isOpen = isDesktop || mobileOpen;

  const masthead = (
    <Masthead>
      <MastheadMain>
        {!isDesktop && (
          <MastheadToggle>
            <PageToggleButton
              isHamburgerButton
              isSidebarOpen={mobileOpen}
              onSidebarToggle={() => setMobileOpen((open) => !open)}
              aria-label={t('Menu')}
              id="drawer-toggle"
            >
              <BarsIcon />
            </PageToggleButton>
          </MastheadToggle>
        )}
        <MastheadBrand>
          <MastheadLogo component="span" className="bastion-brand">
            {PRODUCT_NAME}
          </MastheadLogo>
        </MastheadBrand>
      </MastheadMain>
    </Masthead>
  );
  const sidebar = (
    <PageSidebar isSidebarOpen={isOpen} id="drawer" aria-label={t('Navigation')}>
      <Drawer projectId={projectId === undefined ? undefined : Number(projectId)} onNavigate={() => setMobileOpen(false)} />
    </PageSidebar>
  );
  return (
    // PatternFly marks an open sidebar as expanded (shown over the page) only
    // once it has measured the page, which it does when given onPageResize.
    <Page className="bastion-page" masthead={masthead} sidebar={sidebar} onPageResize={measurePage}>
      {children}
    </Page>
  );
}
