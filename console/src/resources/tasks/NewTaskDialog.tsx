import type { Template } from '../templates/types';
import type { Task } from './types';

export interface NewTaskDialogProps {
  template: Template;
  /** Re-run: the task whose settings fill the form; the title gets the "Re" prefix. */
  rerunOf?: Task;
  onClose(): void;
}

// Placeholder (issue 8): the new task dialog (spec §4, §5). On success it
// opens the new task's log (the `t` query parameter) and calls onClose.
export function NewTaskDialog(_props: NewTaskDialogProps) {
  return null;
}
