export interface DeleteResourceDialogProps {
  /** The kind as the messages name it: "template", "repository", "key"… */
  kind: string;
  /** The object's name, for the confirmation text. */
  name: string;
  /** /project/{id}/<kind path>/{objectId}: refs are read at path + "/refs", delete is DELETE path. */
  path: string;
  /** After a successful delete (reload the list, show a snackbar…). */
  onDeleted(): void;
  onClose(): void;
}

// Placeholder (issue 9): asks the server for the object's references; if any
// exist, shows the "Can't delete the <kind>" dialog listing them with links,
// else a confirmation, then deletes (spec §4, §8).
export function DeleteResourceDialog(_props: DeleteResourceDialogProps) {
  return null;
}
