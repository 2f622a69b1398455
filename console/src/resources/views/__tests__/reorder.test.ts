import { describe, expect, it } from 'vitest';
import { addView, draftOf, moveView, planViewsSave, positionsBody, removeView, renameView, validateViews } from '../reorder';

const saved = [
  { id: 5, project_id: 1, title: 'Prod', position: 1 },
  { id: 3, project_id: 1, title: 'Dev', position: 0 },
  { id: 8, project_id: 1, title: 'Ops', position: 2 },
];

describe('the views draft (spec §4)', () => {
  it('starts in tab order', () => {
    expect(draftOf(saved).map((v) => v.title)).toEqual(['Dev', 'Prod', 'Ops']);
  });

  it('gives new views temporary negative ids, each one new', () => {
    let drafts = addView(draftOf(saved));
    drafts = addView(drafts);
    expect(drafts.slice(3)).toEqual([
      { id: -1, title: '' },
      { id: -2, title: '' },
    ]);
    // Deleting one does not make its id free again for a later one.
    drafts = addView(removeView(drafts, -1));
    expect(drafts.slice(3).map((v) => v.id)).toEqual([-2, -3]);
  });

  it('moves a view from one place to another, as a drop does', () => {
    const drafts = draftOf(saved);
    expect(moveView(drafts, 2, 0).map((v) => v.title)).toEqual(['Ops', 'Dev', 'Prod']);
    expect(moveView(drafts, 0, 2).map((v) => v.title)).toEqual(['Prod', 'Ops', 'Dev']);
    expect(moveView(drafts, 1, 1)).toBe(drafts);
    expect(moveView(drafts, 0, 5)).toBe(drafts);
  });

  it('needs a non-empty title on every view to save', () => {
    const drafts = renameView(addView(draftOf(saved)), 5, '  ');
    expect(validateViews(drafts)).toEqual({ '5': 'Title is required', '-1': 'Title is required' });
    expect(validateViews(draftOf(saved))).toEqual({});
  });
});

describe('saving the draft', () => {
  it('deletes dropped views, renames changed ones, creates new ones and saves every position', () => {
    let drafts = draftOf(saved); // Dev, Prod, Ops
    drafts = removeView(drafts, 8);
    drafts = renameView(drafts, 5, ' Production ');
    drafts = addView(drafts);
    drafts = renameView(drafts, -1, 'Staging');
    drafts = moveView(drafts, 2, 0); // Staging, Dev, Production
    const plan = planViewsSave(saved, drafts);
    expect(plan.remove).toEqual([8]);
    expect(plan.rename).toEqual([{ id: 5, title: 'Production', position: 2 }]);
    expect(plan.create).toEqual([{ tempId: -1, title: 'Staging', position: 0 }]);
    expect(positionsBody(plan, new Map([[-1, 12]]))).toEqual({ '12': 0, '3': 1, '5': 2 });
  });

  it('changes nothing but positions when views were only reordered', () => {
    const plan = planViewsSave(saved, moveView(draftOf(saved), 0, 2));
    expect(plan).toMatchObject({ remove: [], rename: [], create: [] });
    expect(positionsBody(plan, new Map())).toEqual({ '5': 0, '8': 1, '3': 2 });
  });

  it('keeps a GitOps-managed view’s title and position, placing the others around it', () => {
    const withManaged = [
      { id: 3, project_id: 1, title: 'Dev', position: 0 },
      { id: 4, project_id: 1, title: ' From Git', position: 7, managed_by: 'Flux' },
      { id: 5, project_id: 1, title: 'Prod', position: 8 },
    ];
    // Prod above Dev; the Flux view untouched (its title is not trimmed into a rename).
    const plan = planViewsSave(withManaged, moveView(draftOf(withManaged), 2, 0));
    expect(plan).toMatchObject({ remove: [], rename: [], create: [] });
    expect(positionsBody(plan, new Map())).toEqual({ '5': 0, '3': 1, '4': 7 });
  });
});
