/**
 * The `slack` action (contract §6): one message to a Slack incoming webhook, sent as `text` (the
 * notification and fallback) and as one mrkdwn section block. Values are escaped the way Slack
 * asks (`&`, `<`, `>`), so a geofence named `<!channel>` cannot ping anyone or forge a link.
 */
import type { ActionConfigs } from '../action-configs.schemas.ts';
import { defaultMessage, ESCAPES, renderTemplate, type TemplateContext } from '../templates.ts';
import type { ActionExecutor } from './action.ts';
import { failure, sendHttpCall, truncateText, urlSecrets } from './http-call.ts';

/** Slack refuses a section block whose text is longer (400 `invalid_blocks`). */
export const SLACK_SECTION_MAX = 3000;

export const slackAction: ActionExecutor<ActionConfigs['slack']> = {
  async execute(config, context, runtime) {
    if (!config.webhook_url) return failure('No Slack webhook URL is configured; nothing was sent');
    const text = slackText(config.message, context);
    if (text.trim() === '') return failure('The Slack message rendered empty; nothing was sent');
    const body = JSON.stringify({
      text,
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
    });
    return sendHttpCall(
      {
        service: 'Slack',
        url: config.webhook_url,
        headers: { 'content-type': 'application/json' },
        body,
        secrets: urlSecrets(config.webhook_url),
      },
      runtime,
    );
  },
};

export function slackText(message: string | undefined, context: TemplateContext): string {
  const text =
    message === undefined
      ? ESCAPES.slack(defaultMessage(context))
      : renderTemplate(message, context, 'slack');
  // Cutting must not leave half an escape (`&am…`), which Slack would show as typed.
  return truncateText(text, SLACK_SECTION_MAX).replace(/&(?:a|am|amp|l|lt|g|gt)?…$/, '…');
}
