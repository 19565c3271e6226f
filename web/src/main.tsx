import './styles.css';
import { QueryClientProvider, useQueryClient } from '@tanstack/react-query';
import { StrictMode, useEffect, useRef } from 'react';
import { createRoot } from 'react-dom/client';
import { createQueryClient } from './api/queries.ts';
import { App } from './app/App.tsx';
import { AuthProvider, useAuth } from './auth/AuthProvider.tsx';
import { restoreSession } from './auth/session.ts';

const root = document.getElementById('root');
const queryClient = createQueryClient();
// A reload or a new tab signs in from the session cookie first, so nobody is sent to sign in.
if (root) {
  await restoreSession();
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <AuthProvider>
          <WorkspaceQueries />
          <App />
        </AuthProvider>
      </QueryClientProvider>
    </StrictMode>,
  );
}

/**
 * Switching workspace keeps the session, so the answers of the previous workspace are dropped here:
 * the pages on screen read theirs again instead of showing the other workspace's rows.
 */
function WorkspaceQueries() {
  const client = useQueryClient();
  const workspace = useAuth().me?.workspace_id ?? null;
  const shown = useRef(workspace);
  useEffect(() => {
    if (workspace === shown.current) return;
    const previous = shown.current;
    shown.current = workspace;
    if (previous !== null && workspace !== null) void client.resetQueries();
  }, [client, workspace]);
  return null;
}
