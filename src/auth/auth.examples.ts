/** Examples of /auth and /account/api-keys (contract §2.1–§2.3). */
import type { OperationExamples } from '../http/examples/operation-example.ts';
import { CREATED, ids, listOf, UPDATED } from '../http/examples/records.ts';
import { owner, workspace } from '../workspaces/workspaces.examples.ts';

const PASSWORD = 'correct horse battery staple';
const ONE_TIME_TOKEN = 'k3Jx9QvB2mW7tYc4Lp0sRf8Hd6Ng1Za5';
const { role: _role, ...workspaceWithoutRole } = workspace;

export const tokenPair = {
  access_token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIwMTk3YTBjMiJ9.c2lnbmF0dXJl',
  refresh_token: 'eyJhbGciOiJIUzI1NiJ9.eyJ0eXAiOiJyZWZyZXNoIn0.c2lnbmF0dXJl',
  expires_in: 3600,
  token_type: 'Bearer',
};

export const user = {
  id: ids.user,
  email: owner.email,
  name: owner.name,
  email_verified: true,
  created_at: CREATED,
};

export const apiKey = {
  id: ids.apiKey,
  name: 'Fleet tracker',
  scopes: ['locations:write', 'devices:read'],
  prefix: 'gf_live_a1b2',
  created_at: CREATED,
  last_used_at: UPDATED,
  expires_at: null,
};

export const authExamples: OperationExamples = {
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
};
