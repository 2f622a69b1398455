import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { canConfirm, canStop, isForceStop, knownStatus, statusColor } from '../status';
import { TaskStatusLabel } from '../TaskStatusLabel';
import { taskStatuses, type TaskStatus } from '../types';

describe('task status rules (spec §4)', () => {
  it('offers Stop exactly for running, stopping, waiting, starting, waiting_confirmation and confirmed', () => {
    expect(taskStatuses.filter(canStop)).toEqual(['waiting', 'starting', 'waiting_confirmation', 'confirmed', 'running', 'stopping']);
  });

  it('reads Force Stop (force true) only when the task is already stopping', () => {
    expect(taskStatuses.filter(isForceStop)).toEqual(['stopping']);
  });

  it('offers Confirm only while waiting for confirmation', () => {
    expect(taskStatuses.filter(canConfirm)).toEqual(['waiting_confirmation']);
  });

  it('treats an unknown status as an error', () => {
    expect(knownStatus('exploded')).toBe('error');
    expect(knownStatus('running')).toBe('running');
  });
});

describe('the status label', () => {
  const words: Record<TaskStatus, string> = {
    waiting: 'Waiting', starting: 'Starting', waiting_confirmation: 'Waiting confirmation', confirmed: 'Confirmed',
    running: 'Running', success: 'Success', error: 'Failed', stopping: 'Stopping', stopped: 'Stopped',
  };

  it.each(taskStatuses)('shows %s in words', (status) => {
    render(<TaskStatusLabel status={status} />);
    expect(screen.getByTestId('task-status')).toHaveTextContent(words[status]);
  });

  it('shows error as Failed, in red', () => {
    render(<TaskStatusLabel status="error" />);
    expect(screen.getByText('Failed')).toBeInTheDocument();
    expect(statusColor('error')).toBe('red');
    expect(statusColor('success')).toBe('green');
  });

  it('shows an unknown status as Failed', () => {
    render(<TaskStatusLabel status={'exploded' as TaskStatus} />);
    expect(screen.getByTestId('task-status')).toHaveTextContent('Failed');
  });
});
