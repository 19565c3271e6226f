/** Examples of /auth, /account and /workspaces (contract §2). */
import type { OperationExamples } from './operation-example.ts';
import {
  accountSettings,
  apiKey,
  ids,
  invitation,
  listOf,
  member,
  notification,
  tokenPair,
  user,
  workspace,
} from './records.ts';

const PASSWORD = 'correct horse battery staple';
const ONE_TIME_TOKEN = 'k3Jx9QvB2mW7tYc4Lp0sRf8Hd6Ng1Za5';
const { role: _role, ...workspaceWithoutRole } = workspace;

export const identityExamples: OperationExamples = {
  'POST /api/v1/auth/register': {
    request: { email: user.email, password: PASSWORD, name: user.name, workspace_name: workspace.name },
    responses: { 201: { user: { ...user, email_verified: false }, workspace: workspaceWithoutRole } },
  },
  'POST /api/v1/auth/login': {
    request: { email: user.email, password: PASSWORD },
    responses: { 200: tokenPair },
  },
  'POST /api/v1/auth/refresh': {
    request: { refresh_token: tokenPair.refresh_token },
    responses: { 200: tokenPair },
  },
  'POST /api/v1/auth/logout': { responses: {} },
  'POST /api/v1/auth/switch-workspace': {
    request: { workspace_id: ids.workspace },
    responses: { 200: tokenPair },
  },
  'GET /api/v1/auth/me': {
    responses: {
      200: {
        ...user,
        workspace_id: ids.workspace,
        role: 'owner',
        workspaces: [{ id: ids.workspace, name: workspace.name, role: 'owner' }],
      },
    },
  },
  'GET /api/v1/auth/test-api-key': {
    responses: {
      200: {
        valid: true,
        api_key: { id: apiKey.id, name: apiKey.name, prefix: apiKey.prefix, scopes: apiKey.scopes },
        workspace_id: ids.workspace,
      },
    },
  },
  'POST /api/v1/auth/verify-email': {
    request: { token: ONE_TIME_TOKEN },
    responses: { 200: { email_verified: true } },
  },
  'POST /api/v1/auth/verify-email/resend': { responses: { 202: { status: 'accepted' } } },
  'POST /api/v1/auth/password-reset/request': {
    request: { email: user.email },
    responses: { 202: { status: 'accepted' } },
  },
  'POST /api/v1/auth/password-reset/confirm': {
    request: { token: ONE_TIME_TOKEN, password: 'a new, longer passphrase' },
    responses: {},
  },
  'POST /api/v1/account/api-keys': {
    request: { name: apiKey.name, scopes: apiKey.scopes, expires_at: null },
    responses: {
      201: { ...apiKey, last_used_at: null, key: 'gf_live_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6' },
    },
  },
  'GET /api/v1/account/api-keys': { responses: { 200: listOf(apiKey) } },
  'DELETE /api/v1/account/api-keys/{api_key_id}': { responses: {} },
  'GET /api/v1/account/settings': { responses: { 200: accountSettings } },
  'PATCH /api/v1/account/settings': {
    request: { timezone: 'America/New_York', notify_on: ['dlq'] },
    responses: { 200: { ...accountSettings, timezone: 'America/New_York', notify_on: ['dlq'] } },
  },
  'GET /api/v1/account/notifications': { responses: { 200: listOf(notification) } },
  'POST /api/v1/account/notifications/{notification_id}/read': {
    responses: { 200: { id: ids.notification, read: true } },
  },
  'POST /api/v1/account/notifications/read-all': { responses: { 200: { updated: 3 } } },
  'GET /api/v1/workspaces': { responses: { 200: listOf(workspace) } },
  'POST /api/v1/workspaces': {
    request: { name: 'Acme Field Service' },
    responses: { 201: { ...workspace, name: 'Acme Field Service' } },
  },
  'GET /api/v1/workspaces/{workspace_id}': { responses: { 200: workspace } },
  'PATCH /api/v1/workspaces/{workspace_id}': {
    request: { name: 'Acme Logistics EU', settings: { access_token_ttl_seconds: 900 } },
    responses: {
      200: { ...workspace, name: 'Acme Logistics EU', settings: { access_token_ttl_seconds: 900 } },
    },
  },
  'DELETE /api/v1/workspaces/{workspace_id}': { responses: {} },
  'GET /api/v1/workspaces/{workspace_id}/members': {
    responses: {
      200: listOf(
        { user_id: ids.user, email: user.email, name: user.name, role: 'owner', joined_at: user.created_at },
        member,
      ),
    },
  },
  'POST /api/v1/workspaces/{workspace_id}/members': {
    request: { email: member.email, role: 'admin' },
    responses: { 201: member, 202: invitation },
  },
  'PATCH /api/v1/workspaces/{workspace_id}/members/{user_id}': {
    request: { role: 'member' },
    responses: { 200: { ...member, role: 'member' } },
  },
  'DELETE /api/v1/workspaces/{workspace_id}/members/{user_id}': { responses: {} },
  'GET /api/v1/workspaces/{workspace_id}/invitations': {
    responses: {
      200: listOf(invitation, {
        ...invitation,
        id: '0197a0c2-3b14-7d85-8162-9d0e1f203142',
        email: 'margaret@example.com',
        role: 'admin',
        invited_by: null,
        created_at: '2026-03-01T09:00:00.000Z',
        expires_at: '2026-03-08T09:00:00.000Z',
      }),
    },
  },
  'POST /api/v1/workspaces/{workspace_id}/invitations/{invitation_id}/resend': {
    responses: {
      200: { ...invitation, expires_at: '2026-03-18T08:30:00.000Z' },
    },
  },
  'DELETE /api/v1/workspaces/{workspace_id}/invitations/{invitation_id}': { responses: {} },
  'POST /api/v1/workspaces/invitations/accept': {
    request: { token: ONE_TIME_TOKEN },
    responses: { 200: { ...workspace, role: 'member' } },
  },
};
