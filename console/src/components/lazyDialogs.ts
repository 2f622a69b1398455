// The resource screens' dialogs load when first opened (as app/lazyPages.tsx
// does for the team's), so a list shows without the modal, form and editor
// code it does not need yet.
import { lazy } from 'react';

export const LazyDeleteResourceDialog = lazy(async () => ({
  default: (await import('./DeleteResourceDialog')).DeleteResourceDialog,
}));
