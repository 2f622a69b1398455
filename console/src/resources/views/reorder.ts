// The edit-views dialog works on a draft of the view list (docs/features.md §4): new
// views get temporary negative ids until saved, and the order of the draft
// is the order of the tabs. These pure functions are the dialog's logic;
// planViewsSave turns a draft into the calls that make the server match it.
import type { View } from './types';

/** A view as the dialog edits it: a negative id is not saved yet. */
export interface DraftView {
  id: number;
  title: string;
  /** Set when a GitOps tool manages it: it keeps its title and position (docs/gitops.md). */
  managed_by?: string;
}

export const isNewView = (view: DraftView) => view.id < 0;

/** The draft of the server's views, in tab order (position, then id). */
export function draftOf(views: View[]): DraftView[] {
  return [...views]
    .sort((a, b) => a.position - b.position || a.id - b.id)
    .map(({ id, title, managed_by }) => ({ id, title, managed_by }));
}

/** Adds an empty view at the end, with the next temporary negative id. */
export function addView(drafts: DraftView[]): DraftView[] {
  const id = Math.min(0, ...drafts.map((v) => v.id)) - 1;
  return [...drafts, { id, title: '' }];
}

export function renameView(drafts: DraftView[], id: number, title: string): DraftView[] {
  return drafts.map((v) => (v.id === id ? { ...v, title } : v));
}

export function removeView(drafts: DraftView[], id: number): DraftView[] {
  return drafts.filter((v) => v.id !== id);
}

/** Moves the view at index from to index to (a drop, or Move up/down). */
export function moveView(drafts: DraftView[], from: number, to: number): DraftView[] {
  if (from === to || from < 0 || to < 0 || from >= drafts.length || to >= drafts.length) return drafts;
  const next = [...drafts];
  const [moved] = next.splice(from, 1);
  next.splice(to, 0, moved);
  return next;
}

/** View (docs/features.md §5): a title must be non-empty to save. Errors by view id (as text). */
export function validateViews(drafts: DraftView[]): Record<string, string | undefined> {
  const errors: Record<string, string | undefined> = {};
  for (const view of drafts) {
    if (!view.title.trim()) errors[String(view.id)] = 'Title is required';
  }
  return errors;
}

export interface ViewsSavePlan {
  /** Saved views that the draft no longer has. */
  remove: number[];
  /** Saved views whose title changed. */
  rename: { id: number; title: string; position: number }[];
  /** New views (temporary id → what to POST). */
  create: { tempId: number; title: string; position: number }[];
  /**
   * The final position of every view by id, temporary ids included: the
   * caller swaps them for the created views' ids before POST views/positions.
   */
  positions: [id: number, position: number][];
}

/**
 * What saving the draft takes, given the views as the server has them. A
 * view's position is its place in the draft, except that a view a GitOps
 * tool manages keeps the position its Git gives it (the API refuses to
 * move it) and the views after it in the draft go after it; a view the
 * draft puts before a managed one whose position is lower cannot go
 * before it, and shares its position (the tabs then order them by id).
 */
export function planViewsSave(saved: View[], drafts: DraftView[]): ViewsSavePlan {
  const byId = new Map(saved.map((v) => [v.id, v]));
  const kept = new Set(drafts.map((v) => v.id));
  const plan: ViewsSavePlan = { remove: [], rename: [], create: [], positions: [] };
  for (const view of saved) if (!kept.has(view.id)) plan.remove.push(view.id);
  let next = 0;
  drafts.forEach((draft) => {
    const title = draft.title.trim();
    const old = byId.get(draft.id);
    const position = old?.managed_by ? old.position : next;
    next = Math.max(next, position) + 1;
    if (isNewView(draft) || !old) plan.create.push({ tempId: draft.id, title, position });
    else if (!old.managed_by && old.title !== title) plan.rename.push({ id: draft.id, title, position });
    plan.positions.push([draft.id, position]);
  });
  return plan;
}

/** The body of POST views/positions, once new views have their ids. */
export function positionsBody(plan: ViewsSavePlan, createdIds: Map<number, number>): Record<string, number> {
  const body: Record<string, number> = {};
  for (const [id, position] of plan.positions) {
    const real = id < 0 ? createdIds.get(id) : id;
    if (real !== undefined) body[String(real)] = position;
  }
  return body;
}
