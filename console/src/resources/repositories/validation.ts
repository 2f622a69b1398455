import type { Errors } from '../../components/useLazyValidation';
import { isValidGitUrl, urlType } from './gitUrl';

export interface RepositoryFormValues {
  name: string;
  gitUrl: string;
  gitBranch: string;
  sshKeyId: string;
}

export type RepositoryField = 'name' | 'gitUrl' | 'gitBranch' | 'sshKeyId';

/**
 * Repository (docs/features.md §5): name; URL, of a recognised type ("Incorrect URL");
 * branch unless the URL is local; access key. An empty URL gets the
 * server's message for it, "Repository is required".
 */
export function validateRepository(v: RepositoryFormValues): Errors<RepositoryField> {
  const errors: Errors<RepositoryField> = {};
  if (!v.name.trim()) errors.name = 'Name is required';
  if (!v.gitUrl.trim()) errors.gitUrl = 'Repository is required';
  else if (!isValidGitUrl(v.gitUrl)) errors.gitUrl = 'Incorrect URL';
  if (urlType(v.gitUrl) !== 'local' && !v.gitBranch.trim()) errors.gitBranch = 'Branch is required';
  if (!v.sshKeyId) errors.sshKeyId = 'Key is required';
  return errors;
}
