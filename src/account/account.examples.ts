/** Examples of /account: settings and notifications (contract §2.5). */
import type { OperationExamples } from '../http/examples/operation-example.ts';
import { ids, listOf, UPDATED } from '../http/examples/records.ts';

export const notification = {
  id: ids.notification,
  type: 'quota.threshold',
  title: 'Event usage at 80% of your monthly quota',
  body: '8,000 of 10,000 events used this month.',
  data: { threshold: 80, used: 8000, quota: 10000 },
  read: false,
  created_at: UPDATED,
};

export const accountSettings = {
  timezone: 'Europe/Berlin',
  email_notifications: true,
  notify_on: ['dlq', 'quota', 'api_key'],
};

export const accountExamples: OperationExamples = {
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
};
