/**
 * The `teams` action (contract §6): a legacy Office 365 connector MessageCard, the format Teams
 * incoming webhooks accept: titled with the event, the message as its text, and the device,
 * geofence, event, point and time as facts, so the card is useful even with a custom message.
 */
import type { ActionConfigs } from '../action-configs.schemas.ts';
import { defaultMessage, defaultSubject, renderTemplate, type TemplateContext } from '../templates.ts';
import type { ActionExecutor } from './action.ts';
import { failure, sendHttpCall, urlSecrets } from './http-call.ts';

/** The card's accent colour: green for enter, orange for exit, blue for dwell. */
const THEME_COLORS = { enter: '2EB67D', exit: 'E8912D', dwell: '1D73C9' } as const;

export const teamsAction: ActionExecutor<ActionConfigs['teams']> = {
  async execute(config, context, runtime) {
    if (!config.webhook_url) return failure('No Teams webhook URL is configured; nothing was sent');
    const text =
      config.message === undefined
        ? defaultMessage(context)
        : renderTemplate(config.message, context, 'text');
    if (text.trim() === '') return failure('The Teams message rendered empty; nothing was sent');
    return sendHttpCall(
      {
        service: 'Teams',
        url: config.webhook_url,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(messageCard(text, context)),
        secrets: urlSecrets(config.webhook_url),
      },
      runtime,
    );
  },
};

export function messageCard(text: string, context: TemplateContext) {
  const title = defaultSubject(context);
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: title,
    themeColor: THEME_COLORS[context.event_type],
    title,
    text,
    sections: [
      {
        facts: [
          { name: 'Device', value: context.device.name },
          { name: 'Geofence', value: context.geofence.name },
          { name: 'Event', value: context.event },
          { name: 'Point', value: `${context.point.lat}, ${context.point.lng}` },
          { name: 'Time', value: context.occurred_at },
        ],
      },
    ],
  };
}
