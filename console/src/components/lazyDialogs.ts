// The resource screens' dialogs load when first opened (as app/lazyPages.tsx
// does for the team's), so a list shows without the modal, form and editor
// code it does not need yet.
import { lazy } from 'react';

export const LazyDeleteResourceDialog = lazy(async () => ({
  default: (await import('./DeleteResourceDialog')).DeleteResourceDialog,
}));

// What a GitOps-managed object shows instead of its edit and delete
// (components/gitops/Managed.tsx), with its own words: loaded only when a
// screen has such an object. Here rather than in a module of its own, so
// that the screens' first load gains no chunk for it.
export const LazyManaged = lazy(() => import('./gitops/Managed'));
