/** Request and response schemas of /workspaces (contract §2.4), and the workspace as /auth shows it. */
import { Type } from 'typebox';
import { component } from '../http/components.ts';
import { Id, Nullable, StringEnum, Timestamp } from '../http/schemas.ts';
import type { PendingInvitation } from './invitations.repository.ts';
import type { Member, Membership, Workspace } from './workspaces.repository.ts';

export const Role = StringEnum(['owner', 'admin', 'member']);

export const WorkspaceSchema = Type.Object({
  id: Id,
  name: Type.String(),
  settings: Type.Object({ access_token_ttl_seconds: Type.Integer() }),
  role: Type.Optional(Role),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const MemberSchema = Type.Object({
  user_id: Id,
  email: Type.String(),
  name: Nullable(Type.String()),
  role: Role,
  joined_at: Timestamp,
});

/** The user who sent an invitation; null when an API key did, or that account no longer exists. */
const InviterSchema = Type.Object(
  { user_id: Id, email: Type.String(), name: Nullable(Type.String()) },
  { description: 'Who sent it: null when an API key did, or that account no longer exists' },
);

/** A pending invitation (sent, not yet accepted; `expires_at` may be past: it can be resent). */
export const InvitationSchema = Type.Object({
  id: Id,
  email: Type.String(),
  role: Role,
  invited_by: Nullable(InviterSchema),
  created_at: Timestamp,
  expires_at: Timestamp,
});

component('Workspace', WorkspaceSchema);
component('Member', MemberSchema);
component('Invitation', InvitationSchema);

/** A new invitation; `accept_url` only when no e-mail can carry the link (no SMTP_URL). */
export const CreatedInvitationSchema = Type.Object({
  ...InvitationSchema.properties,
  accept_url: Type.Optional(
    Type.String({
      description:
        'The link that accepts the invitation, present only when the service has no SMTP_URL and ' +
        'the invitation e-mail cannot be sent: pass it on to the invitee. Not shown again.',
    }),
  ),
});
component('CreatedInvitation', CreatedInvitationSchema);

export const WorkspaceParams = Type.Object({ workspace_id: Type.String() });
export const MemberParams = Type.Object({ workspace_id: Type.String(), user_id: Type.String() });
export const InvitationParams = Type.Object({
  workspace_id: Type.String(),
  invitation_id: Type.String(),
});

export const CreateWorkspaceBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 255 }) },
  { additionalProperties: false },
);

export const WorkspacePatch = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    settings: Type.Optional(
      Type.Object(
        {
          access_token_ttl_seconds: Type.Optional(
            Type.Integer({
              minimum: 300,
              maximum: 2_592_000,
              description: 'Access token lifetime, 300..2,592,000 s',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const AddMemberBody = Type.Object(
  { email: Type.String({ format: 'email', maxLength: 254 }), role: Role },
  { additionalProperties: false },
);

export const ChangeRoleBody = Type.Object({ role: Role }, { additionalProperties: false });

export const InvitationTokenBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 512 }) },
  { additionalProperties: false },
);

export function workspaceOut(workspace: Workspace, role?: Membership['role']) {
  return {
    id: workspace.id,
    name: workspace.name,
    settings: { access_token_ttl_seconds: workspace.accessTokenTtlSeconds },
    ...(role ? { role } : {}),
    created_at: workspace.createdAt.toISOString(),
    updated_at: workspace.updatedAt.toISOString(),
  };
}

export function memberOut(m: Member) {
  return {
    user_id: m.userId,
    email: m.email,
    name: m.name,
    role: m.role,
    joined_at: m.joinedAt.toISOString(),
  };
}

export function invitationOut(i: PendingInvitation) {
  return {
    id: i.id,
    email: i.email,
    role: i.role,
    invited_by: i.invitedBy
      ? { user_id: i.invitedBy.userId, email: i.invitedBy.email, name: i.invitedBy.name }
      : null,
    created_at: i.createdAt.toISOString(),
    expires_at: i.expiresAt.toISOString(),
  };
}
