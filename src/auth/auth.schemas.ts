/** Request and response schemas of /auth (contract §2.1–2.3). */
import { Type } from 'typebox';
import { component } from '../http/components.ts';
import { Id, Nullable, StringEnum, Timestamp } from '../http/schemas.ts';
import { Role } from '../workspaces/workspaces.schemas.ts';
import type { User } from './users.repository.ts';

export const Email = Type.String({ format: 'email', maxLength: 254, description: 'E-mail address' });
export const Password = Type.String({ minLength: 8, maxLength: 128, description: '8..128 characters' });

export const UserSchema = Type.Object({
  id: Id,
  email: Type.String(),
  name: Nullable(Type.String()),
  email_verified: Type.Boolean(),
  created_at: Timestamp,
});

export const TokenPairSchema = Type.Object({
  access_token: Type.String({ description: 'JWT access token' }),
  refresh_token: Type.String({ description: 'JWT refresh token (rotates on every refresh)' }),
  expires_in: Type.Integer({ description: 'Access token lifetime in seconds' }),
  token_type: StringEnum(['Bearer']),
});

/** A browser session's answer: the refresh token went into the `gf_refresh` cookie instead. */
export const BrowserTokensSchema = Type.Object({
  access_token: Type.String({ description: 'JWT access token' }),
  expires_in: Type.Integer({ description: 'Access token lifetime in seconds' }),
  token_type: StringEnum(['Bearer']),
  refresh_token_cookie: Type.Literal(true, {
    description:
      'The refresh token was set as the HttpOnly `gf_refresh` cookie (Path /api/v1/auth) and is not in the body',
  }),
});
/** Login, refresh and switch-workspace answer a pair, or an access token alone for a browser session. */
export const SessionTokensSchema = Type.Union([TokenPairSchema, BrowserTokensSchema]);

component('User', UserSchema);
component('TokenPair', TokenPairSchema);
component('BrowserTokens', BrowserTokensSchema);

export const RegisterBody = Type.Object(
  {
    email: Email,
    password: Password,
    name: Type.Optional(Type.String({ maxLength: 255 })),
    workspace_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false },
);

export const LoginBody = Type.Object(
  {
    email: Type.String({ maxLength: 254 }),
    password: Type.String({ maxLength: 1024 }),
    workspace_id: Type.Optional(Type.String()),
    use_cookie: Type.Optional(
      Type.Boolean({
        description:
          'A browser session (contract §2.2): the refresh token is set as an HttpOnly, SameSite=Strict cookie ' +
          'limited to /api/v1/auth instead of being returned, and the answer is `BrowserTokens`',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RefreshBody = Type.Object(
  {
    refresh_token: Type.Optional(
      Type.String({
        maxLength: 4096,
        description:
          'Required unless the request carries the `gf_refresh` cookie of a browser session (then send `{}`)',
      }),
    ),
  },
  { additionalProperties: false },
);
export const LogoutBody = Type.Object(
  { refresh_token: Type.Optional(Type.String({ maxLength: 4096 })) },
  { additionalProperties: false },
);
export const TokenBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 512 }) },
  { additionalProperties: false },
);
export const SwitchWorkspaceBody = Type.Object(
  {
    workspace_id: Type.String(),
    use_cookie: Type.Optional(
      Type.Boolean({
        description:
          'A browser session (contract §2.2): the refresh token is set as an HttpOnly, SameSite=Strict cookie ' +
          'limited to /api/v1/auth instead of being returned, and the answer is `BrowserTokens`; the session the request came from ends',
      }),
    ),
  },
  { additionalProperties: false },
);
export const ResetRequestBody = Type.Object(
  { email: Type.String({ maxLength: 254 }) },
  { additionalProperties: false },
);
export const ResetConfirmBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 512 }), password: Password },
  { additionalProperties: false },
);
export const AcceptedSchema = Type.Object({ status: StringEnum(['accepted']) });

export const MeSchema = Type.Object({
  id: Id,
  email: Type.String(),
  name: Nullable(Type.String()),
  email_verified: Type.Boolean(),
  workspace_id: Id,
  role: Role,
  workspaces: Type.Array(Type.Object({ id: Id, name: Type.String(), role: Role })),
  created_at: Timestamp,
});

export const TestApiKeySchema = Type.Object({
  valid: Type.Boolean(),
  api_key: Type.Object({
    id: Id,
    name: Type.String(),
    prefix: Type.String(),
    scopes: Type.Array(Type.String()),
  }),
  workspace_id: Id,
});

export function userOut(user: User) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    email_verified: user.emailVerifiedAt !== null,
    created_at: user.createdAt.toISOString(),
  };
}
