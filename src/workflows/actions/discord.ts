/**
 * The `discord` action (contract §6): one message to a Discord webhook as `content`. Mentions
 * are switched off (`allowed_mentions.parse: []`): an `@everyone` in a device or geofence name
 * is shown, never pinged. Discord refuses content over 2000 characters, so longer text is cut.
 */
import type { ActionConfigs } from '../action-configs.schemas.ts';
import { defaultMessage, renderTemplate } from '../templates.ts';
import type { ActionExecutor } from './action.ts';
import { failure, sendHttpCall, truncateText, urlSecrets } from './http-call.ts';

export const DISCORD_CONTENT_MAX = 2000;

export const discordAction: ActionExecutor<ActionConfigs['discord']> = {
  async execute(config, context, runtime) {
    if (!config.webhook_url) return failure('No Discord webhook URL is configured; nothing was sent');
    const text =
      config.message === undefined
        ? defaultMessage(context)
        : renderTemplate(config.message, context, 'text');
    if (text.trim() === '') return failure('The Discord message rendered empty; nothing was sent');
    const body = JSON.stringify({
      content: truncateText(text, DISCORD_CONTENT_MAX),
      allowed_mentions: { parse: [] },
    });
    return sendHttpCall(
      {
        service: 'Discord',
        url: config.webhook_url,
        headers: { 'content-type': 'application/json' },
        body,
        secrets: urlSecrets(config.webhook_url),
      },
      runtime,
    );
  },
};
