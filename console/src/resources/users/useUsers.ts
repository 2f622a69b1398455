import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiDelete, apiGet, apiPost, apiPut } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';
import type { User } from './types';

/** GET /users: every field for an admin, {id, username, name} for others. */
export function useUsers(enabled = true) {
  return useQuery({ queryKey: queryKeys.users, queryFn: () => apiGet<User[]>('/users'), enabled });
}

/** The body of POST /users and PUT /users/{id}. */
export interface UserRequest {
  name: string;
  username: string;
  email: string;
  alert: boolean;
  admin: boolean;
  can_create_project: boolean;
  password?: string;
}

function useInvalidateUsers() {
  const queryClient = useQueryClient();
  return () => {
    void queryClient.invalidateQueries({ queryKey: queryKeys.users });
    void queryClient.invalidateQueries({ queryKey: queryKeys.currentUser });
  };
}

export function useCreateUser() {
  const invalidate = useInvalidateUsers();
  return useMutation({
    mutationFn: (request: UserRequest) => apiPost<User>('/users', request),
    onSuccess: invalidate,
  });
}

export function useUpdateUser(userId: number) {
  const invalidate = useInvalidateUsers();
  return useMutation({
    mutationFn: (request: UserRequest) => apiPut(`/users/${userId}`, { ...request, id: userId }),
    onSuccess: invalidate,
  });
}

export function useDeleteUser() {
  const invalidate = useInvalidateUsers();
  return useMutation({
    mutationFn: (user: User) => apiDelete(`/users/${user.id}`),
    onSuccess: invalidate,
  });
}

export function useChangePassword(userId: number) {
  return useMutation({
    mutationFn: (password: string) => apiPost(`/users/${userId}/password`, { password }),
  });
}
