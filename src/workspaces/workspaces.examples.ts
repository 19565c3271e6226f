/** Examples of /workspaces, their members and invitations (contract §2.4). */
import type { OperationExamples } from '../http/examples/operation-example.ts';
import { CREATED, ids, listOf, UPDATED } from '../http/examples/records.ts';

const ONE_TIME_TOKEN = 'k3Jx9QvB2mW7tYc4Lp0sRf8Hd6Ng1Za5';

export const workspace = {
  id: ids.workspace,
  name: 'Acme Logistics',
  settings: { access_token_ttl_seconds: 3600 },
  role: 'owner',
  created_at: CREATED,
  updated_at: UPDATED,
};

/** The example user (auth.examples.ts) as the workspace's owner. */
export const owner = {
  user_id: ids.user,
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  role: 'owner',
  joined_at: CREATED,
};

export const member = {
  user_id: ids.otherUser,
  email: 'grace@example.com',
  name: 'Grace Hopper',
  role: 'admin',
  joined_at: UPDATED,
};

export const invitation = {
  id: ids.invitation,
  email: 'linus@example.com',
  role: 'member',
  invited_by: { user_id: owner.user_id, email: owner.email, name: owner.name },
  created_at: UPDATED,
  expires_at: '2026-03-17T12:05:00.000Z',
};

export const workspaceExamples: OperationExamples = {
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
  'GET /api/v1/workspaces/{workspace_id}/members': { responses: { 200: listOf(owner, member) } },
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
