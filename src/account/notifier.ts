/**
 * Creates notifications for the people who should hear about something (contract §2.5): the
 * owners and admins of a workspace, or one user. Each gets an in-app notification and, when their
 * settings ask for that topic by e-mail, a message. Called for dead letters (delivery worker), quota
 * thresholds (quota-notifications.ts) and API-key creation and revocation.
 */
import type { Db } from '../db/database.ts';
import type { Mailer } from '../mail/mailer.ts';
import { notificationEmail } from '../mail/templates.ts';
import type { Clock } from '../shared/clock.ts';
import { uuidv7 } from '../shared/ids.ts';
import { listWorkspaceAdmins } from '../workspaces/workspaces.repository.ts';
import { insertNotification } from './notifications.repository.ts';
import { findSettings, type NotifyTopic } from './settings.repository.ts';

export interface NotificationInput {
  workspaceId: string;
  topic: NotifyTopic;
  type: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  /** Where on the dashboard it is acted on (a path): the e-mail links there. */
  action?: { label: string; path: string };
}

export class Notifier {
  private readonly db: Db;
  private readonly mailer: Mailer;
  private readonly clock: Clock;
  private readonly publicUrl: string;
  constructor(deps: { db: Db; mailer: Mailer; clock: Clock; publicUrl: string }) {
    this.db = deps.db;
    this.mailer = deps.mailer;
    this.clock = deps.clock;
    this.publicUrl = deps.publicUrl;
  }

  /** Notifies the workspace's owners and admins. */
  async notifyWorkspaceAdmins(input: NotificationInput): Promise<void> {
    const admins = await listWorkspaceAdmins(this.db, input.workspaceId);
    const now = this.clock.now();
    for (const admin of admins) {
      await insertNotification(this.db, {
        id: uuidv7(),
        userId: admin.userId,
        workspaceId: input.workspaceId,
        type: input.type,
        title: input.title,
        body: input.body,
        data: input.data,
        now,
      });
      const settings = await findSettings(this.db, admin.userId);
      if (settings.emailNotifications && settings.notifyOn.includes(input.topic)) {
        const action = input.action && {
          label: input.action.label,
          url: `${this.publicUrl}${input.action.path}`,
        };
        await this.mailer.send(notificationEmail(admin.email, input.title, input.body, action));
      }
    }
  }
}
