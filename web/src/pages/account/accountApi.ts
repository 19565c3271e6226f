/** The calls of the account page: your notification preferences and the e-mail check. */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { answerOf } from '../../api/queries.ts';
import type { operations } from '../../api/schema.ts';

export const accountKeys = { settings: ['account', 'settings'] as const };

type SettingsChange = operations['updateAccountSettings']['requestBody']['content']['application/json'];

export function useAccountSettings() {
  return useQuery({
    queryKey: accountKeys.settings,
    queryFn: ({ signal }) => answerOf(api.GET('/api/v1/account/settings', { signal })),
  });
}

export function saveAccountSettings(body: SettingsChange) {
  return api.PATCH('/api/v1/account/settings', { body });
}

export function resendVerificationEmail() {
  return api.POST('/api/v1/auth/verify-email/resend');
}
