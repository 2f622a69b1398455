import type { Errors } from '../../components/useLazyValidation';
import { msg } from '../../i18n/msg';

export interface MemberFormValues {
  userId: string;
  role: string;
}

/** Team member (docs/features.md §5): user and role are required; the role reuses the user message. */
export function validateMember({ userId, role }: MemberFormValues): Errors<'userId' | 'role'> {
  return {
    userId: userId ? undefined : msg('User is required'),
    role: role ? undefined : msg('User is required'),
  };
}
