/** A repository as /api answers it (api-contract.md). */
export interface Repository {
  id: number;
  name: string;
  project_id: number;
  git_url: string;
  git_branch: string;
  ssh_key_id: number;
}
