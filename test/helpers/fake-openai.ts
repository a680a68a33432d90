/**
 * A local server speaking the OpenAI Chat Completions API (POST /v1/chat/completions), so the real
 * `openai` client and provider code run against it. Each test scripts the replies.
 */
import { createServer, type Server } from 'node:http';

export interface ChatRequest {
  model: string;
  messages: {
    role: string;
    content: string | null;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
    tool_call_id?: string;
  }[];
  tools?: { function: { name: string } }[];
}

export type Reply =
  | { hang: true }
  | { status: number; body: unknown }
  | { text: string }
  | { toolCalls: { id: string; name: string; args: unknown }[] };

export class FakeOpenAi {
  readonly requests: ChatRequest[] = [];
  readonly authorizations: string[] = [];
  private server: Server | undefined;
  url = '';

  constructor(private readonly reply: (request: ChatRequest, index: number) => Reply) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk) => (raw += chunk));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
          res
            .writeHead(404, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { message: 'not found' } }));
          return;
        }
        const request = JSON.parse(raw) as ChatRequest;
        this.requests.push(request);
        this.authorizations.push(req.headers.authorization ?? '');
        const reply = this.reply(request, this.requests.length - 1);
        if ('hang' in reply) return; // never answers: a model call that is in flight when something else happens
        if ('status' in reply) {
          res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
          return;
        }
        const message =
          'text' in reply
            ? { role: 'assistant', content: reply.text }
            : {
                role: 'assistant',
                content: null,
                tool_calls: reply.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: JSON.stringify(call.args) },
                })),
              };
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: `chatcmpl-${this.requests.length}`,
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: request.model,
            choices: [{ index: 0, message, finish_reason: 'text' in reply ? 'stop' : 'tool_calls' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** The usual script: a tool call on the user's message, then an answer quoting the tool result. */
export function toolThenAnswer(toolName: string, args: unknown) {
  return (request: ChatRequest): Reply => {
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return { text: `The tool said: ${last.content}` };
    return { toolCalls: [{ id: `call_${request.messages.length}`, name: toolName, args }] };
  };
}
