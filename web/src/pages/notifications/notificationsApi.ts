/**
 * The calls of the notifications inbox. Notifications arrive from the server's side (dead letters,
 * quota), so the inbox is read again whenever it is shown rather than kept for a while.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { answerOf } from '../../api/queries.ts';

const PAGE = 25;

export const notificationKeys = {
  all: ['notifications'] as const,
  list: (unreadOnly: boolean, offset: number) => ['notifications', 'list', { unreadOnly, offset }] as const,
};

export function useNotifications(unreadOnly: boolean, offset: number) {
  return useQuery({
    queryKey: notificationKeys.list(unreadOnly, offset),
    queryFn: ({ signal }) =>
      answerOf(
        api.GET('/api/v1/account/notifications', {
          params: { query: { offset, limit: PAGE, ...(unreadOnly ? { unread: true } : {}) } },
          signal,
        }),
      ),
    staleTime: 0,
  });
}

export function markNotificationRead(id: string) {
  return api.POST('/api/v1/account/notifications/{notification_id}/read', {
    params: { path: { notification_id: id } },
  });
}

export function markAllNotificationsRead() {
  return api.POST('/api/v1/account/notifications/read-all');
}
