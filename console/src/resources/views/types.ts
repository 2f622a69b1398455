/** A view: a tab of the template list (spec §3). */
export interface View {
  id: number;
  project_id: number;
  title: string;
  position: number;
}
