import { createContext, useContext } from 'react';
import type { Info } from '../api/useInfo';
import type { User } from '../resources/users/types';

export interface Session {
  user: User;
  info: Info;
}

export const SessionContext = createContext<Session | null>(null);

/** The signed-in user and the server's info; there once the console has started. */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession is only available once the console has started');
  return session;
}
