/** A view: a tab of the template list (docs/features.md §3). */
export interface View {
  id: number;
  project_id: number;
  title: string;
  position: number;
}
