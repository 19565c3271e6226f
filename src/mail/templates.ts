/** Plain-text and HTML bodies of every e-mail the service sends. */
import type { MailMessage } from './mailer.ts';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function layout(
  to: string,
  subject: string,
  lines: string[],
  action?: { label: string; url: string },
): MailMessage {
  const text = [...lines, ...(action ? ['', `${action.label}: ${action.url}`] : [])].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    ...lines.map((l) => `<p>${escapeHtml(l)}</p>`),
    action ? `<p><a href="${escapeHtml(action.url)}">${escapeHtml(action.label)}</a></p>` : '',
    '</body></html>',
  ].join('');
  return { to, subject, text, html };
}

export function verificationEmail(to: string, publicUrl: string, token: string): MailMessage {
  return layout(
    to,
    'Verify your e-mail address',
    ['Welcome to the Geofencing Service.', `Your verification token: ${token}`, 'It expires in 48 hours.'],
    { label: 'Verify your e-mail', url: `${publicUrl}/verify-email?token=${encodeURIComponent(token)}` },
  );
}

export function passwordResetEmail(to: string, publicUrl: string, token: string): MailMessage {
  return layout(
    to,
    'Reset your password',
    [
      'Someone asked to reset the password of this account. If it was not you, ignore this message.',
      `Your reset token: ${token}`,
      'It expires in 1 hour.',
    ],
    { label: 'Choose a new password', url: `${publicUrl}/reset-password?token=${encodeURIComponent(token)}` },
  );
}

/** The page where an invitation is accepted: the link of the e-mail, and of the answer without SMTP. */
export function invitationAcceptUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/accept-invitation?token=${encodeURIComponent(token)}`;
}

export function invitationEmail(
  to: string,
  publicUrl: string,
  workspaceName: string,
  role: string,
  token: string,
): MailMessage {
  return layout(
    to,
    `You are invited to ${workspaceName}`,
    [
      `You have been invited to join the workspace "${workspaceName}" as ${role}.`,
      `Your invitation token: ${token}`,
      'It expires in 7 days.',
    ],
    {
      label: 'Accept the invitation',
      url: invitationAcceptUrl(publicUrl, token),
    },
  );
}

export function notificationEmail(
  to: string,
  title: string,
  body: string,
  action?: { label: string; url: string },
): MailMessage {
  return layout(to, title, [body], action);
}
