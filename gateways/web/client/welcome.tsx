/** The first screen: what the agent is, and prompts that work in a default install (the scripted model). */
const EXAMPLES = [
  { text: 'help', why: 'what the agent can do here' },
  { text: 'run `ls -la`', why: 'a shell command, after you approve it' },
  { text: 'ask me', why: 'a question form the agent asks you' },
  { text: 'what time is it', why: 'a tool that runs without asking' },
];

export function Welcome({ start, demoModel }: { start: (text: string) => void; demoModel: boolean }) {
  return (
    <section class="welcome" data-testid="welcome" aria-labelledby="welcome-title">
      <h2 id="welcome-title">What should the agent do?</h2>
      {demoModel && (
        <p class="demo-model" data-testid="demo-model">
          This agent answers with a <strong>scripted demo model</strong>, not an AI: it knows the commands
          below and a few more (<code>help</code>). To connect yours, set <code>MODEL_PROVIDER</code> and its
          key (in <code>.env</code> or the environment) and start again: the README's “Configure” shows how.
        </p>
      )}
      <p>
        It asks before anything risky runs, waits as long as it takes for your answer, and keeps every
        conversation through restarts. Try one of these, or write below.
      </p>
      <ul class="examples">
        {EXAMPLES.map((example) => (
          <li key={example.text}>
            <button
              type="button"
              class="example"
              data-testid="example-prompt"
              onClick={() => start(example.text)}
            >
              <code>{example.text}</code>
              <span>{example.why}</span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
