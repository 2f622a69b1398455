import { describe, expect, it } from 'vitest';
import { project } from '../../../test/fixtures';
import { projectHome, selectProject } from '../selection';
import { byName } from '../useProjects';

const projects = [project(3, 'Alpha'), project(5, 'Beta'), project(8, 'Gamma')];

describe('project selection order (spec §2)', () => {
  it('is the project in the route first', () => {
    expect(selectProject(projects, 8, 5)?.id).toBe(8);
  });

  it('else the last project remembered on this browser', () => {
    expect(selectProject(projects, undefined, 5)?.id).toBe(5);
    expect(selectProject(projects, 99, 5)?.id).toBe(5);
  });

  it('else the first project', () => {
    expect(selectProject(projects)?.id).toBe(3);
    expect(selectProject(projects, 99, 42)?.id).toBe(3);
  });

  it('is nothing without projects', () => {
    expect(selectProject([], 1, 1)).toBeUndefined();
  });

  it('opens history for a normal project, activity for another type', () => {
    expect(projectHome(project(3, 'Alpha'))).toBe('/project/3/history');
    expect(projectHome(project(4, 'Ops', 'other'))).toBe('/project/4/activity');
  });
});

describe('the project list order', () => {
  it('is by name, whatever order the server answered in, so "first" is stable', () => {
    const answered = [project(9, 'beta'), project(2, 'Alpha'), project(4, 'alpha'), project(1, 'Gamma')];
    expect(byName(answered).map((p) => p.id)).toEqual([2, 4, 9, 1]);
    expect(selectProject(byName(answered))?.id).toBe(2);
  });
});
