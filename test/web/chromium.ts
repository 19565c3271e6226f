/**
 * Debian's Chromium (`/usr/bin/chromium`, installed by CI with apt; never a browser a test tool
 * downloads) launched through playwright-core, for the browser tests and `bench:web` alike.
 * Playwright's `launch` gives every browser a fresh temporary profile (user-data dir) of its own and
 * deletes it on close; the flags keep Chromium from calling home or updating itself.
 */
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
