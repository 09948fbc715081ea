import { NOUN_SUMMARIES } from '../nouns.js';
import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'completion',
  args: [{ name: '<shell>', help: 'the shell', choices: ['bash', 'zsh', 'fish'] }],
  summary: NOUN_SUMMARIES.completion,
  flags: {
    dynamic: { type: 'boolean', help: 'also complete names the service knows (states, labels, epics) by asking it, as OPSCTL_COMPLETE_DYNAMIC=1 does' },
  },
  examples: [
    'opsctl completion bash > /etc/bash_completion.d/opsctl',
    'opsctl completion zsh > "${fpath[1]}/_opsctl"',
    'opsctl completion fish > ~/.config/fish/completions/opsctl.fish',
    'opsctl completion bash --dynamic > ~/.local/share/bash-completion/completions/opsctl',
  ],
  load: (): RunModule => import('./completion.js'),
});
