/** /account/settings and /account/notifications (contract §2.5); personal to the signed-in user. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { userOf } from '../auth/route-auth.ts';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { component } from '../http/components.ts';
import {
  errorResponses,
  FreeObject,
  Id,
  ListOf,
  PaginationQuery,
  page,
  StringEnum,
  Timestamp,
} from '../http/schemas.ts';
import type { Clock } from '../shared/clock.ts';
import { NotFoundError } from '../shared/errors.ts';
import { updateSettings } from './account.service.ts';
import { listNotifications, markAllRead, markRead } from './notifications.repository.ts';
import { type AccountSettings, findSettings, NOTIFY_TOPICS } from './settings.repository.ts';

const tags = ['account'];

const SettingsSchema = Type.Object({
  timezone: Type.String({ description: 'IANA time zone, e.g. Europe/Berlin' }),
  email_notifications: Type.Boolean(),
  notify_on: Type.Array(StringEnum(NOTIFY_TOPICS)),
});
component('AccountSettings', SettingsSchema);

const SettingsPatch = Type.Object(
  {
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    email_notifications: Type.Optional(Type.Boolean()),
    notify_on: Type.Optional(Type.Array(StringEnum(NOTIFY_TOPICS), { uniqueItems: true })),
  },
  { additionalProperties: false },
);

const NotificationSchema = Type.Object({
  id: Id,
  type: Type.String(),
  title: Type.String(),
  body: Type.String(),
  data: FreeObject,
  read: Type.Boolean(),
  created_at: Timestamp,
});
component('Notification', NotificationSchema);

function settingsOut(s: AccountSettings) {
  return { timezone: s.timezone, email_notifications: s.emailNotifications, notify_on: s.notifyOn };
}

export interface AccountRoutesDeps {
  db: Db;
  clock: Clock;
  capabilities: DialectCapabilities;
}

export async function accountRoutes(fastify: FastifyInstance, deps: AccountRoutesDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, clock, capabilities } = deps;

  app.get(
    '/account/settings',
    {
      config: { auth: { scope: 'account:read', via: 'user' } },
      schema: {
        operationId: 'getAccountSettings',
        tags,
        summary: 'Your account settings',
        response: { 200: SettingsSchema, ...errorResponses(401, 403) },
      },
    },
    async (request) => settingsOut(await findSettings(db, userOf(request).userId)),
  );

  app.patch(
    '/account/settings',
    {
      config: { auth: { scope: 'account:write', via: 'user' } },
      schema: {
        operationId: 'updateAccountSettings',
        tags,
        summary: 'Change your account settings',
        body: SettingsPatch,
        response: { 200: SettingsSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const body = request.body;
      const settings = await updateSettings(
        db,
        capabilities,
        userOf(request).userId,
        { timezone: body.timezone, emailNotifications: body.email_notifications, notifyOn: body.notify_on },
        clock.now(),
      );
      return settingsOut(settings);
    },
  );

  app.get(
    '/account/notifications',
    {
      config: { auth: { scope: 'account:read', via: 'user' } },
      schema: {
        operationId: 'listNotifications',
        tags,
        summary: 'Your notifications, newest first',
        querystring: Type.Object({ ...PaginationQuery.properties, unread: Type.Optional(Type.Boolean()) }),
        response: { 200: ListOf(NotificationSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const offset = request.query.offset ?? 0;
      const limit = request.query.limit ?? 50;
      const { items, total } = await listNotifications(db, userOf(request).userId, {
        unread: request.query.unread,
        offset,
        limit,
      });
      return page(
        items.map((n) => ({
          id: n.id,
          type: n.type,
          title: n.title,
          body: n.body,
          data: n.data,
          read: n.readAt !== null,
          created_at: n.createdAt.toISOString(),
        })),
        total,
        offset,
        limit,
      );
    },
  );

  app.post(
    '/account/notifications/:notification_id/read',
    {
      config: { auth: { scope: 'account:write', via: 'user' } },
      schema: {
        operationId: 'markNotificationRead',
        tags,
        summary: 'Mark one notification read',
        params: Type.Object({ notification_id: Type.String() }),
        response: { 200: Type.Object({ id: Id, read: Type.Boolean() }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const found = await markRead(db, userOf(request).userId, request.params.notification_id, clock.now());
      if (!found) throw new NotFoundError('Notification');
      return { id: request.params.notification_id, read: true };
    },
  );

  app.post(
    '/account/notifications/read-all',
    {
      config: { auth: { scope: 'account:write', via: 'user' } },
      schema: {
        operationId: 'markAllNotificationsRead',
        tags,
        summary: 'Mark every notification read',
        response: { 200: Type.Object({ updated: Type.Integer() }), ...errorResponses(401, 403) },
      },
    },
    async (request) => ({ updated: await markAllRead(db, userOf(request).userId, clock.now()) }),
  );
}
