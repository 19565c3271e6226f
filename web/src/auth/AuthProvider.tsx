/**
 * Who is signed in, and the actions that change it. Pages read `useAuth()`; the token pair itself
 * stays in `session.ts`.
 */
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { api, errorMessage } from '../api/client.ts';
import type { paths } from '../api/schema.ts';
import { endSession, isSignedIn, onSessionChange, startSession } from './session.ts';

export type Me = paths['/api/v1/auth/me']['get']['responses'][200]['content']['application/json'];

interface Auth {
  me: Me | null;
  login(email: string, password: string): Promise<string | null>;
  register(input: {
    email: string;
    password: string;
    name?: string;
    workspace_name?: string;
  }): Promise<string | null>;
  logout(): Promise<void>;
  switchWorkspace(workspaceId: string): Promise<string | null>;
  reload(): Promise<void>;
}

const AuthContext = createContext<Auth | null>(null);

export function AuthProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null>(null);

  const reload = useCallback(async () => {
    const { data } = await api.GET('/api/v1/auth/me');
    setMe(data ?? null);
  }, []);

  useEffect(() => onSessionChange((signedIn) => (signedIn ? undefined : setMe(null))), []);
  // Signed in from the session cookie before the first render (a reload, a new tab).
  useEffect(() => {
    if (isSignedIn()) void reload();
  }, [reload]);

  const login = useCallback(
    async (email: string, password: string) => {
      const { data, error } = await api.POST('/api/v1/auth/login', {
        body: { email, password, use_cookie: true },
      });
      if (!data) return errorMessage(error);
      startSession(data);
      await reload();
      return null;
    },
    [reload],
  );

  const register = useCallback<Auth['register']>(
    async (input) => {
      const { error } = await api.POST('/api/v1/auth/register', { body: input });
      if (error) return errorMessage(error);
      return login(input.email, input.password);
    },
    [login],
  );

  const logout = useCallback(async () => {
    // The access token names the session; ending it revokes its refresh token and clears the cookie.
    await api.POST('/api/v1/auth/logout').catch(() => undefined);
    endSession();
  }, []);

  const switchWorkspace = useCallback(
    async (workspace_id: string) => {
      const { data, error } = await api.POST('/api/v1/auth/switch-workspace', {
        body: { workspace_id, use_cookie: true },
      });
      if (!data) return errorMessage(error);
      startSession(data);
      await reload();
      return null;
    },
    [reload],
  );

  const value = useMemo(
    () => ({ me, login, register, logout, switchWorkspace, reload }),
    [me, login, register, logout, switchWorkspace, reload],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): Auth {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error('useAuth outside AuthProvider');
  return auth;
}
