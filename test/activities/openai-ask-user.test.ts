/** What an OpenAI-compatible model receives for an answered ask_user: the README's JSON, nothing around it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiModel } from '../../activities/model/openai';
import type { Message } from '../../workflows/session/contract';
import { FakeOpenAi } from '../helpers/fake-openai';

let fake: FakeOpenAi;
beforeAll(async () => {
  fake = await new FakeOpenAi(() => ({ text: 'thanks' })).start();
});
afterAll(async () => {
  await fake.stop();
});

describe('ask_user result for an OpenAI-style model', () => {
  it('sends the structured answer as bare JSON, while other results still say how they ended', async () => {
    const answer = JSON.stringify({
      answers: [{ question: 'Environment', selected: ['staging'] }],
      answered_by: 'alice',
      answered_at: '2026-11-20T10:00:00.000Z',
    });
    const transcript: Message[] = [
      { role: 'user', id: 'u1', userId: 'alice', text: 'deploy', at: 1 },
      {
        role: 'assistant',
        id: 'a1',
        text: '',
        at: 2,
        toolCalls: [
          { id: 'c1', name: 'ask_user', args: { questions: [] } },
          { id: 'c2', name: 'shell_execute', args: { command: 'rm -rf /' } },
        ],
      },
      { role: 'tool', id: 't1', toolCallId: 'c1', name: 'ask_user', status: 'ok', content: answer, at: 3 },
      {
        role: 'tool',
        id: 't2',
        toolCallId: 'c2',
        name: 'shell_execute',
        status: 'denied',
        content: 'no',
        at: 4,
      },
    ];
    const complete = createOpenAiModel({
      baseUrl: fake.url,
      apiKey: 'sk-test',
      model: 'm',
      systemPrompt: 's',
    });
    await complete(transcript);
    const tools = fake.requests.at(-1)!.messages.filter((m) => m.role === 'tool');
    expect(JSON.parse(tools[0]!.content!)).toEqual(JSON.parse(answer));
    expect(tools[1]!.content).toBe('[denied] no');
  });
});
