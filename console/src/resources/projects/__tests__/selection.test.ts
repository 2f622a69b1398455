import { describe, expect, it } from 'vitest';
import { project } from '../../../test/fixtures';
import { projectHome, selectProject } from '../selection';

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
