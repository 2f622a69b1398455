import { describe, expect, it } from 'vitest';
import { lastStatus, lastTaskId, lastVersion, runLabel, taskVersion } from '../display';
import { task, template } from './fixtures';

describe('the list’s version and status (spec §2)', () => {
  it('has no status for a template that never ran, which the list shows as Not launched', () => {
    expect(lastStatus(template(1, 'never'))).toBeUndefined();
    expect(lastVersion(template(1, 'never', { type: 'build' }))).toBeUndefined();
  });

  it('shows the last task’s status', () => {
    expect(lastStatus(template(1, 'ran', { last_task: task(9, { status: 'error' }) }))).toBe('error');
  });

  it('shows the version a build made', () => {
    expect(lastVersion(template(1, 'b', { type: 'build', last_task: task(9, { version: '1.0.4' }) }))).toBe('1.0.4');
  });

  it('shows the version of the build a deploy deployed', () => {
    const deployed = task(10, { build_task_id: 9, build_task: task(9, { version: '1.0.4' }), version: null });
    expect(lastVersion(template(2, 'd', { type: 'deploy', last_task: deployed }))).toBe('1.0.4');
    // A deploy task that carries the version itself.
    expect(taskVersion(task(11, { version: '2.0.0' }), 'deploy')).toBe('2.0.0');
  });

  it('shows no version for a plain task', () => {
    expect(lastVersion(template(3, 't', { type: '', last_task: task(9, { version: '7' }) }))).toBeUndefined();
  });

  it('names the action after the type: Run, Build, Deploy', () => {
    expect([runLabel(''), runLabel('build'), runLabel('deploy')]).toEqual(['Run', 'Build', 'Deploy']);
  });

  it('takes the last task id from last_task_id, else from last_task', () => {
    expect(lastTaskId(template(1, 'a', { last_task_id: 12, last_task: task(12) }))).toBe(12);
    expect(lastTaskId(template(1, 'a', { last_task: task(12) }))).toBe(12);
    expect(lastTaskId(template(1, 'a'))).toBeUndefined();
  });
});
