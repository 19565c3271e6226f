/**
 * The calls of the team page and the queries over them: members and pending invitations, each
 * paged. An invitation, a role change or a removal invalidates `['team']`: an invited user who
 * already had an account joins the members at once, anyone else is pending. Both lists also change
 * by other people's hands (an invitee accepting), so they are read again whenever the page is shown.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { answerOf } from '../../api/queries.ts';
import type { Role } from './roles.ts';

export const PAGE = 50;

export const teamKeys = {
  all: ['team'] as const,
  members: (workspaceId: string, offset: number) => ['team', 'members', workspaceId, offset] as const,
  invitations: (workspaceId: string, offset: number) => ['team', 'invitations', workspaceId, offset] as const,
};

export function useMembers(workspaceId: string, offset: number) {
  return useQuery({
    queryKey: teamKeys.members(workspaceId, offset),
    queryFn: ({ signal }) =>
      answerOf(
        api.GET('/api/v1/workspaces/{workspace_id}/members', {
          params: { path: { workspace_id: workspaceId }, query: { offset, limit: PAGE } },
          signal,
        }),
      ),
    staleTime: 0,
  });
}

export function useInvitations(workspaceId: string, offset: number) {
  return useQuery({
    queryKey: teamKeys.invitations(workspaceId, offset),
    queryFn: ({ signal }) =>
      answerOf(
        api.GET('/api/v1/workspaces/{workspace_id}/invitations', {
          params: { path: { workspace_id: workspaceId }, query: { offset, limit: PAGE } },
          signal,
        }),
      ),
    staleTime: 0,
  });
}

export function inviteMember(workspaceId: string, email: string, role: Role) {
  return api.POST('/api/v1/workspaces/{workspace_id}/members', {
    params: { path: { workspace_id: workspaceId } },
    body: { email, role },
  });
}

export function changeMemberRole(workspaceId: string, userId: string, role: Role) {
  return api.PATCH('/api/v1/workspaces/{workspace_id}/members/{user_id}', {
    params: { path: { workspace_id: workspaceId, user_id: userId } },
    body: { role },
  });
}

export function removeMember(workspaceId: string, userId: string) {
  return api.DELETE('/api/v1/workspaces/{workspace_id}/members/{user_id}', {
    params: { path: { workspace_id: workspaceId, user_id: userId } },
  });
}

export function resendInvitation(workspaceId: string, invitationId: string) {
  return api.POST('/api/v1/workspaces/{workspace_id}/invitations/{invitation_id}/resend', {
    params: { path: { workspace_id: workspaceId, invitation_id: invitationId } },
  });
}

export function revokeInvitation(workspaceId: string, invitationId: string) {
  return api.DELETE('/api/v1/workspaces/{workspace_id}/invitations/{invitation_id}', {
    params: { path: { workspace_id: workspaceId, invitation_id: invitationId } },
  });
}
