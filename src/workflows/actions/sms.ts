/**
 * The `sms` action (contract §6): one message through Twilio's Messages REST API, `POST
 * {base}/2010-04-01/Accounts/{AccountSid}/Messages.json` with a form-encoded `To`, `From` and
 * `Body`, authenticated with HTTP basic auth (account SID and auth token). Twilio answers 201 with
 * the message resource, or an error object whose `code` and `message` say what to fix.
 */
import type { ActionConfigs } from '../action-configs.schemas.ts';
import { defaultMessage, renderTemplate } from '../templates.ts';
import type { ActionExecutor } from './action.ts';
import { failure, sendHttpCall, truncateText } from './http-call.ts';

export const TWILIO_API_BASE_URL = 'https://api.twilio.com';
/** Twilio refuses a longer body (error 21617). */
export const SMS_BODY_MAX = 1600;

export const smsAction: ActionExecutor<ActionConfigs['sms']> = {
  async execute(config, context, runtime) {
    if (!config.auth_token) return failure('No Twilio auth token is configured; nothing was sent');
    const text =
      config.body === undefined ? defaultMessage(context) : renderTemplate(config.body, context, 'text');
    if (text.trim() === '') return failure('The SMS body rendered empty; nothing was sent');
    const base = (config.api_base_url ?? TWILIO_API_BASE_URL).replace(/\/+$/, '');
    const url = `${base}/2010-04-01/Accounts/${encodeURIComponent(config.account_sid)}/Messages.json`;
    const credentials = Buffer.from(`${config.account_sid}:${config.auth_token}`).toString('base64');
    const form = new URLSearchParams({
      To: config.to,
      From: config.from,
      Body: truncateText(text, SMS_BODY_MAX),
    });
    return sendHttpCall(
      {
        service: 'Twilio',
        url,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${credentials}`,
        },
        body: form.toString(),
        // The account SID is no secret (Twilio repeats it in every answer); the token is.
        secrets: [config.auth_token, credentials],
        failureDetail: twilioError,
      },
      runtime,
    );
  },
};

/** "error 21211: Invalid 'To' Phone Number (https://www.twilio.com/docs/errors/21211)", or null. */
export function twilioError(excerpt: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(excerpt);
  } catch {
    return null; // not Twilio's JSON (a proxy's page, a cut excerpt): the text is shown instead
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const { code, message, more_info: moreInfo } = parsed as Record<string, unknown>;
  if (typeof message !== 'string') return null;
  const prefix = typeof code === 'number' || typeof code === 'string' ? `error ${code}: ` : '';
  const link = typeof moreInfo === 'string' ? ` (${moreInfo})` : '';
  return `${prefix}${message}${link}`;
}
