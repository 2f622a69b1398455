// Task pod settings load when a screen shows them, so the settings page's
// and the template editor's first loads carry neither their code nor
// their words (the "taskpods" catalog).
import { lazy } from 'react';

const load = () => import('./TaskPodsFields');
export const LazyTaskPodsFields = lazy(load);
export const LazyProjectTaskPodsCard = lazy(async () => ({ default: (await load()).ProjectTaskPodsCard }));
