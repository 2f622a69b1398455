// The integration dialogs load when first opened (as app/lazyPages.tsx does
// for the other screens): the list and the detail show without them.
import { lazy } from 'react';

export const IntegrationDialog = lazy(async () => ({ default: (await import('./IntegrationDialog')).IntegrationDialog }));
export const ExtractValueDialog = lazy(async () => ({ default: (await import('./ExtractValueDialog')).ExtractValueDialog }));
export const MatcherDialog = lazy(async () => ({ default: (await import('./MatcherDialog')).MatcherDialog }));
