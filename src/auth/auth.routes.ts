/** /auth routes (seed §4.1, contract §2.1–2.3). */

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { API_PREFIX } from '../http/openapi.ts';
import { errorResponses } from '../http/schemas.ts';
import { enforceRateLimit } from '../limits/enforce.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import { DomainError, FieldValidationError, ForbiddenError } from '../shared/errors.ts';
import { WorkspaceSchema, workspaceOut } from '../workspaces/workspaces.schemas.ts';
import {
  AcceptedSchema,
  LoginBody,
  MeSchema,
  RefreshBody,
  RegisterBody,
  ResetConfirmBody,
  ResetRequestBody,
  SessionTokensSchema,
  SwitchWorkspaceBody,
  TestApiKeySchema,
  TokenBody,
  UserSchema,
  userOut,
} from './auth.schemas.ts';
import * as auth from './auth.service.ts';
import type { IdentityContext } from './identity-context.ts';
import type { LoginAttempts } from './login-attempts.ts';
import { confirmPasswordReset } from './password-reset.service.ts';
import type { PasswordResetRequests } from './password-reset-requests.ts';
import { principalOf, userOf } from './route-auth.ts';
import { sessionAnswer, sessionCookies } from './session-cookie.ts';

export interface AuthRoutesDeps {
  identity: IdentityContext;
  limiters: {
    login: LoginAttempts;
    refresh: RateLimiter;
    register: RateLimiter;
    verificationEmails: RateLimiter;
  };
  passwordResets: PasswordResetRequests;
}

const tags = ['authentication'];
const BROWSER_SESSIONS =
  ' With `use_cookie: true` (the dashboard) the refresh token is set as the HttpOnly, SameSite=Strict ' +
  '`gf_refresh` cookie, Path /api/v1/auth, Secure when PUBLIC_URL is https, and the answer carries the ' +
  'access token alone (`BrowserTokens`); a readable `gf_session=1` cookie says a session cookie exists.';
/** 401s that mean the refresh token is over: its cookie is cleared so the page stops presenting it. */
const SESSION_OVER = new Set(['INVALID_AUTH_TOKEN', 'TOKEN_EXPIRED', 'NOT_AUTHENTICATED']);

export async function authRoutes(fastify: FastifyInstance, deps: AuthRoutesDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = deps.identity;
  const cookies = sessionCookies({ publicUrl: ctx.publicUrl, authPath: `${API_PREFIX}/auth` });

  app.post(
    '/auth/register',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'registerUser',
        tags,
        summary: 'Create a user and a workspace it owns; sends a verification e-mail',
        description:
          'Rate limited per client IP: REGISTER_RATE_LIMIT registrations (default 10 per rolling hour), ' +
          'every well-formed request counting, whatever its answer; beyond: 429 RATE_LIMIT_EXCEEDED with ' +
          'Retry-After (whole seconds until one is accepted) and `details {limit, period_seconds}`.',
        body: RegisterBody,
        response: {
          201: Type.Object({ user: UserSchema, workspace: WorkspaceSchema }),
          ...errorResponses(400, 403, 429),
        },
      },
    },
    async (request, reply) => {
      await enforceRateLimit(deps.limiters.register, request.ip, 'registrations from this address');
      const body = request.body;
      const { user, workspace } = await auth.register(ctx, {
        email: body.email,
        password: body.password,
        name: body.name,
        workspaceName: body.workspace_name,
      });
      return reply.status(201).send({ user: userOut(user), workspace: workspaceOut(workspace, 'owner') });
    },
  );

  app.post(
    '/auth/login',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'logIn',
        tags,
        summary: 'Exchange e-mail and password for a token pair (failed attempts rate limited per client IP)',
        description:
          'Failed attempts (wrong e-mail or password, 401) are limited per client IP: LOGIN_RATE_LIMIT ' +
          '(default 5 per rolling minute). Successful sign-ins do not use the budget up. Once it is ' +
          'used up, every attempt from that address gets 429 RATE_LIMIT_EXCEEDED with Retry-After, the ' +
          'right password included, until the oldest failure leaves the window: the limit stops ' +
          'password guessing, so a correct guess is not confirmed while it holds.' +
          BROWSER_SESSIONS,
        body: LoginBody,
        response: { 200: SessionTokensSchema, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const pair = await deps.limiters.login.attempt(request.ip, () =>
        auth.login(ctx, {
          email: request.body.email,
          password: request.body.password,
          workspaceId: request.body.workspace_id,
        }),
      );
      return sessionAnswer(cookies, reply, pair, request.body.use_cookie === true);
    },
  );

  app.post(
    '/auth/refresh',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'refreshTokens',
        tags,
        summary: 'Rotate a refresh token: returns a new access and refresh token (rate limited per user)',
        description:
          'Presenting a refresh token that was already used revokes its whole session (401). A browser ' +
          'session sends `{}` and its `gf_refresh` cookie: the new refresh token replaces the cookie and the ' +
          "answer is `BrowserTokens`. The cookie is honoured only from the service's own pages (an `Origin` " +
          'header of PUBLIC_URL or of the host addressed; otherwise 403), and a 401 clears it.',
        body: RefreshBody,
        response: { 200: SessionTokensSchema, ...errorResponses(401, 403, 429) },
      },
    },
    async (request, reply) => {
      const inBody = request.body.refresh_token;
      const token = inBody ?? cookies.refreshToken(request);
      if (token === undefined)
        throw new FieldValidationError([
          { type: 'missing', loc: ['body', 'refresh_token'], msg: 'Field required' },
        ]);
      const fromCookie = inBody === undefined;
      if (fromCookie && !cookies.fromOwnOrigin(request))
        throw new ForbiddenError("The session cookie is accepted only from this service's own pages");
      try {
        const claims = await ctx.tokens.verifyRefresh(token);
        await enforceRateLimit(deps.limiters.refresh, claims.sub, 'token refreshes for this user');
        return sessionAnswer(cookies, reply, await auth.refresh(ctx, token), fromCookie);
      } catch (error) {
        if (fromCookie && error instanceof DomainError && SESSION_OVER.has(error.code)) cookies.clear(reply);
        throw error;
      }
    },
  );

  app.post(
    '/auth/logout',
    {
      config: { auth: { scope: null, via: 'user' } },
      schema: {
        operationId: 'logOut',
        tags,
        summary: 'End the current session: its access and refresh tokens stop working at once',
        description:
          "Also clears a browser session's cookies, and ends the session the `gf_refresh` cookie names when " +
          'it is the same user’s (another tab may have switched workspace since).',
        // No body schema: clients usually send none. A `{refresh_token}` body is accepted and
        // ignored, because the access token already names the session to end.
        response: { 204: Type.Null({ description: 'Session ended' }), ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      const user = userOf(request);
      await auth.logout(ctx, user.sessionId, {
        userId: user.userId,
        refreshToken: cookies.refreshToken(request),
      });
      cookies.clear(reply);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/auth/switch-workspace',
    {
      config: { auth: { scope: null, via: 'user' } },
      schema: {
        operationId: 'switchWorkspace',
        tags,
        summary: 'Get a token pair for another workspace the user belongs to',
        description:
          "Opens a session in that workspace; the current one is left to run out (a browser session's " +
          'cookie now names the new one).' +
          BROWSER_SESSIONS,
        body: SwitchWorkspaceBody,
        response: { 200: SessionTokensSchema, ...errorResponses(401, 404) },
      },
    },
    async (request, reply) =>
      sessionAnswer(
        cookies,
        reply,
        await auth.switchWorkspace(ctx, userOf(request).userId, request.body.workspace_id),
        request.body.use_cookie === true,
      ),
  );

  app.get(
    '/auth/me',
    {
      config: { auth: { scope: null, via: 'user' } },
      schema: {
        operationId: 'getCurrentUser',
        tags,
        summary: 'The signed-in user and its workspaces',
        response: { 200: MeSchema, ...errorResponses(401) },
      },
    },
    async (request) => {
      const principal = userOf(request);
      const { user, memberships } = await auth.currentUser(ctx, principal.userId);
      return {
        ...userOut(user),
        workspace_id: principal.workspaceId,
        role: principal.role,
        workspaces: memberships.map((m) => ({ id: m.workspace.id, name: m.workspace.name, role: m.role })),
      };
    },
  );

  app.get(
    '/auth/test-api-key',
    {
      config: { auth: { scope: null, via: 'api_key' } },
      schema: {
        operationId: 'testApiKey',
        tags,
        summary: 'Check that an API key is valid; a JWT or a bad key gives 401',
        response: { 200: TestApiKeySchema, ...errorResponses(401, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      if (principal.kind !== 'api_key') throw new Error('unreachable: route requires an API key');
      return {
        valid: true,
        api_key: {
          id: principal.apiKeyId,
          name: principal.name,
          prefix: principal.prefix,
          scopes: [...principal.grantedScopes],
        },
        workspace_id: principal.workspaceId,
      };
    },
  );

  app.post(
    '/auth/verify-email',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'verifyEmail',
        tags,
        summary: 'Confirm an e-mail address with the token from the verification e-mail',
        body: TokenBody,
        response: { 200: Type.Object({ email_verified: Type.Boolean() }), ...errorResponses(400) },
      },
    },
    async (request) => {
      await auth.verifyEmail(ctx, request.body.token);
      return { email_verified: true };
    },
  );

  app.post(
    '/auth/verify-email/resend',
    {
      config: { auth: { scope: null, via: 'user' } },
      schema: {
        operationId: 'resendVerificationEmail',
        tags,
        summary: 'Send the verification e-mail again',
        description:
          'At most 3 resends per address per rolling hour; beyond: 429 RATE_LIMIT_EXCEEDED with ' +
          'Retry-After, and no new link (the last one keeps working). Nothing is sent, nor counted, for ' +
          'an address already verified.',
        response: { 202: AcceptedSchema, ...errorResponses(401, 429) },
      },
    },
    async (request, reply) => {
      await auth.resendVerification(ctx, userOf(request).userId, deps.limiters.verificationEmails);
      return reply.status(202).send({ status: 'accepted' as const });
    },
  );

  app.post(
    '/auth/password-reset/request',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'requestPasswordReset',
        tags,
        summary: 'E-mail a password-reset token (always 202: whether the address exists is not revealed)',
        description:
          'The answer is the same, after the same work, for every address; the e-mail goes out after it. ' +
          'At most 3 reset e-mails per address per hour (beyond: still 202, no e-mail) and ' +
          '20 requests per client IP per hour (beyond: 429 RATE_LIMIT_EXCEEDED with Retry-After).',
        body: ResetRequestBody,
        response: { 202: AcceptedSchema, ...errorResponses(429) },
      },
    },
    async (request, reply) => {
      await deps.passwordResets.accept(request.ip, request.body.email, ctx.clock.now());
      return reply.status(202).send({ status: 'accepted' as const });
    },
  );

  app.post(
    '/auth/password-reset/confirm',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'confirmPasswordReset',
        tags,
        summary: 'Set a new password with a reset token; ends every session of the user',
        body: ResetConfirmBody,
        response: { 204: Type.Null({ description: 'Password changed' }), ...errorResponses(400) },
      },
    },
    async (request, reply) => {
      await confirmPasswordReset(ctx, request.body.token, request.body.password);
      return reply.status(204).send(null);
    },
  );
}
