import type { ReactNode } from 'react';
import { Masthead, MastheadBrand, MastheadLogo, MastheadMain, Page } from '@patternfly/react-core';
import { PRODUCT_NAME } from './brand';
import './ProjectFrame.css';

/** The frame of pages outside any project (docs/features.md §2: no drawer there). */
export function PlainFrame({ children }: { children: ReactNode }) {
  const masthead = (
    <Masthead>
      <MastheadMain>
        <MastheadBrand>
          <MastheadLogo component="span" className="bastion-brand">
            {PRODUCT_NAME}
          </MastheadLogo>
        </MastheadBrand>
      </MastheadMain>
    </Masthead>
  );
  return <Page masthead={masthead}>{children}</Page>;
}
