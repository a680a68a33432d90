/**
 * The README's quick start, literally, in Chromium: `.env.example` copied to `.env` with a model connected the way
 * its own comments show (MODEL_PROVIDER=openai, OPENAI_API_KEY, MODEL; the base URL points at a local server that
 * speaks the Chat Completions API), `npm start` in that directory, the printed link opened, a message sent. The
 * answer is the model's, `npm start` says which model answers, and the key is never printed.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser';
import { tempDir } from '../helpers/config';
import { FakeOpenAi } from '../helpers/fake-openai';
import { freeBrowserRefusedPort, freePort } from '../helpers/processes';
import { startAll } from '../helpers/start-all';
import { until } from '../helpers/until';

const ROOT = path.resolve(__dirname, '../..');
const KEY = 'sk-quickstart-0123456789abcdef';
let model: FakeOpenAi;
let browser: Browser;

beforeAll(async () => {
  model = await new FakeOpenAi(() => ({ text: 'Hello from your own model.' }), {
    latency: [50, 150],
  }).start();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await model?.stop();
});

describe('the README quick start with a .env', () => {
  it('answers with the model .env names, says so at start, and never prints the key', async () => {
    // cp .env.example .env, then the model lines its comments show, uncommented and filled in.
    const project = tempDir('quick-start-');
    copyFileSync(path.join(ROOT, '.env.example'), path.join(project, '.env'));
    const dotEnv = readFileSync(path.join(project, '.env'), 'utf8')
      .replace(/^MODEL_PROVIDER=scripted$/m, '# MODEL_PROVIDER=scripted')
      .replace(/^# MODEL_PROVIDER=openai$/m, 'MODEL_PROVIDER=openai')
      .replace(/^# OPENAI_BASE_URL=.*$/m, `OPENAI_BASE_URL=${model.url}`)
      .replace(/^# OPENAI_API_KEY=.*$/m, `OPENAI_API_KEY=${KEY}`)
      .replace(/^# MODEL=gpt-5-mini$/m, 'MODEL=gpt-5-mini');
    expect(dotEnv).toContain(`OPENAI_API_KEY=${KEY}`);
    writeFileSync(path.join(project, '.env'), dotEnv);

    const port = await freePort();
    const uiPort = await freeBrowserRefusedPort();
    const httpPort = await freeBrowserRefusedPort([uiPort]);
    // Only what a test must choose (free ports; the .env's PUBLIC_URL names port 3000): the rest comes from .env.
    const started = await startAll(
      {
        PORT: String(port),
        PUBLIC_URL: `http://localhost:${port}`,
        TEMPORAL_PORT: String(await freePort()),
        TEMPORAL_UI_PORT: String(uiPort),
        TEMPORAL_HTTP_PORT: String(httpPort),
        DATA_DIR: undefined,
        AGENT_CONFIG: undefined,
        TEMPORAL_ADDRESS: undefined,
        MODEL_PROVIDER: undefined,
        OPENAI_API_KEY: undefined,
        OPENAI_BASE_URL: undefined,
        MODEL: undefined,
        AGENT_DOTENV: undefined,
      },
      port,
      project,
    );
    try {
      const output = started.output();
      expect(output).toContain('Model:        openai gpt-5-mini');
      const link = /Web chat:\s+(http:\/\/localhost:\d+\/\?token=\S+)/.exec(output)?.[1];
      expect(link).toBeDefined();
      // DATA_DIR defaults to ./data in the directory npm start ran in.
      expect(output).toContain(`Data:         ${path.join(project, 'data')}`);

      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(link!);
      await page.getByTestId('new-session').click();
      await page.getByTestId('message-input').fill('hello');
      await page.getByTestId('send').click();
      await until('the model’s answer on the page', async () =>
        (
          (await page
            .getByTestId('assistant-message')
            .last()
            .textContent()
            .catch(() => '')) ?? ''
        ).includes('Hello from your own model.'),
      );
      // The model was called with the key from .env; the key appears nowhere in what npm start printed.
      expect(model.authorizations).toContain(`Bearer ${KEY}`);
      expect(model.requests.at(-1)?.model).toBe('gpt-5-mini');
      expect(started.output()).not.toContain(KEY);
      await page.close();
    } finally {
      expect(await started.stop()).toBe(0);
    }
    expect(started.output()).not.toContain(KEY);
  });
});
