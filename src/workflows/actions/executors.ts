/**
 * The executor of each action type the workflow worker runs itself. `webhook` actions are not
 * here: they are webhook deliveries, sent by the delivery worker (ADR 014).
 */
import type { ActionExecutors } from '../action-worker.ts';
import { databaseAction } from './database.ts';
import { discordAction } from './discord.ts';
import { emailAction } from './email.ts';
import { lambdaAction } from './lambda.ts';
import { slackAction } from './slack.ts';
import { smsAction } from './sms.ts';
import { snsAction } from './sns.ts';
import { teamsAction } from './teams.ts';

export const ACTION_EXECUTORS: ActionExecutors = {
  slack: slackAction,
  discord: discordAction,
  teams: teamsAction,
  email: emailAction,
  sms: smsAction,
  lambda: lambdaAction,
  sns: snsAction,
  database: databaseAction,
} as unknown as ActionExecutors;
