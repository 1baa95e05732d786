import type { PushNotificationView } from "../models/views.ts";
import { htmlToText } from "../text/html-to-text.ts";
import { avatarOf, type Urls } from "./account.ts";

/** Mastodon's notification_mailer.<type>.subject (en), the push's title. */
const TITLES: Record<string, (name: string) => string> = {
  mention: (name) => `You were mentioned by ${name}`,
  status: (name) => `${name} just posted`,
  reblog: (name) => `${name} boosted your post`,
  follow: (name) => `${name} is now following you`,
  follow_request: (name) => `Pending follower: ${name}`,
  favourite: (name) => `${name} favorited your post`,
  poll: (name) => `A poll by ${name} has ended`,
  update: (name) => `${name} edited a post`,
  quote: (name) => `${name} quoted your post`,
  quoted_update: (name) => `${name} edited a post you have quoted`,
  "admin.sign_up": (name) => `${name} signed up`,
  "admin.report": (name) => `${name} submitted a report`,
};

/** Rails' truncate(length: 140): longer text is cut so that it ends in "..." within 140 characters. */
function truncate(text: string, length = 140): string {
  const chars = [...text];
  return chars.length <= length ? text : `${chars.slice(0, length - 3).join("")}...`;
}

/**
 * Mastodon's Web::NotificationSerializer: what a push carries, for the app's service worker or
 * notification extension to show without a request (title, body, icon) and to tell which
 * account and notification it is (access_token, notification_id).
 */
export function serializePushNotification(urls: Urls, input: PushNotificationView): string {
  const { notification: n, from, status } = input;
  const name = from.displayName.trim() || from.username;
  const body = status ? status.spoilerText || status.text || htmlToText(status.contentHtml) : from.note || htmlToText(from.noteHtml);
  return JSON.stringify({
    ...(input.accessToken !== null ? { access_token: input.accessToken } : {}),
    preferred_locale: input.locale,
    notification_id: n.id,
    notification_type: n.type,
    icon: avatarOf(urls, from),
    title: (TITLES[n.type] ?? ((who: string) => who))(name),
    body: truncate(body.trim()),
  });
}
