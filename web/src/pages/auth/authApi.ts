/**
 * The calls of the pages reached from an e-mail's link (password reset, e-mail check, invitation).
 * Signing in, out and switching workspace belong to the session (auth/AuthProvider.tsx).
 */
import { api } from '../../api/client.ts';

export function requestPasswordReset(email: string) {
  return api.POST('/api/v1/auth/password-reset/request', { body: { email } });
}

export function confirmPasswordReset(token: string, password: string) {
  return api.POST('/api/v1/auth/password-reset/confirm', { body: { token, password } });
}

export function verifyEmail(token: string) {
  return api.POST('/api/v1/auth/verify-email', { body: { token } });
}

export function acceptInvitation(token: string) {
  return api.POST('/api/v1/workspaces/invitations/accept', { body: { token } });
}
