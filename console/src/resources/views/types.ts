/** A view: a tab of the template list (docs/features.md §3). */
export interface View {
  id: number;
  project_id: number;
  title: string;
  position: number;
  /** Set when a GitOps tool manages it: its title and position are its Git's (docs/gitops.md). */
  managed_by?: string;
}
