/**
 * Driving the observer page in headless Chromium (playwright-core, Debian's /usr/bin/chromium):
 * a browser context of its own, the page opened and logged in with the surface's token.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import type { ObserverFrame } from '../../src/admin/index.js';

export const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'];

export interface OpenPage {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Errors the page's scripts threw. */
  readonly problems: string[];
}

/** Opens `url` (an admin surface's `/`) in a fresh profile under `dir`; logs in with `token` when given. */
export async function openObserver(dir: string, url: string, token?: string): Promise<OpenPage> {
  expect(existsSync(CHROMIUM), `${CHROMIUM} is required (apt-get install chromium)`).toBe(true);
  const context = await chromium.launchPersistentContext(join(dir, 'profile'), { executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1280, height: 1400 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.setDefaultTimeout(10_000);
  await page.goto(`${url}/`);
  if (token !== undefined) {
    await page.locator('#login').waitFor({ state: 'visible' });
    await page.fill('#token', token);
    await page.click('#login button[type=submit]');
  }
  await page.locator('#main').waitFor({ state: 'visible' });
  return { context, page, problems };
}

/** Drops the page's token (the open event stream goes on), or puts it back. */
export async function setToken(page: Page, token: string | undefined): Promise<void> {
  await page.evaluate(token === undefined ? "sessionStorage.removeItem('molo.admin.token')" : `sessionStorage.setItem('molo.admin.token', ${JSON.stringify(token)})`);
}

/** Clicks `selector` and answers the prompt or confirmation it opens (`false`: dismiss it); resolves with its message. */
export async function clickAnswering(page: Page, selector: string, answer: string | boolean): Promise<string> {
  let message = '';
  const handled = new Promise<void>((resolve) => {
    page.once('dialog', (dialog) => {
      message = dialog.message();
      void (answer === false ? dialog.dismiss() : dialog.accept(typeof answer === 'string' ? answer : undefined)).then(resolve);
    });
  });
  await page.locator(selector).click();
  await handled;
  return message;
}

/** The first frame of a surface's `/events` that passes `check` (with `token` as the bearer, where the surface has one). */
export async function frameWhere(url: string, check: (frame: ObserverFrame) => boolean, options: { readonly token?: string; readonly timeoutMs?: number } = {}): Promise<ObserverFrame> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 10_000);
  try {
    const headers: Record<string, string> = options.token === undefined ? {} : { authorization: `Bearer ${options.token}` };
    const response = await fetch(`${url}/events`, { headers, signal: controller.signal });
    expect(response.status).toBe(200);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!block.startsWith('event: frame')) continue;
        const frame = JSON.parse(block.slice(block.indexOf('data: ') + 6)) as ObserverFrame;
        if (check(frame)) return frame;
      }
    }
    throw new Error('the event stream ended');
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}
