/** A task's approval as /api answers it (Bastion's addition): present for a task whose template requires approval. */
export interface TaskApproval {
  status: 'waiting' | 'approved' | 'rejected';
  /** Who decided, or why a decision was refused (the server's words). */
  message: string;
  /** A rejection's reason. */
  reason?: string;
}

/** The message the server gives a task that waits for approval. */
export const waitingForApprovalMessage = 'Waiting for approval';
