/** The `/agent` slash command (ask, pending, stop) and its registration with Discord. */
import {
  Routes,
  ApplicationCommandOptionType,
  type RESTPutAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import type { REST } from '@discordjs/rest';

export const agentCommands: RESTPutAPIApplicationCommandsJSONBody = [
  {
    name: 'agent',
    description: 'Talk to the agent',
    // Guild channels, bot DMs and private channels.
    contexts: [0, 1, 2],
    options: [
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'ask',
        description: 'Ask the agent something in this channel',
        options: [
          {
            type: ApplicationCommandOptionType.String,
            name: 'text',
            description: 'Your message',
            required: true,
            max_length: 6_000,
          },
        ],
      },
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'pending',
        description: 'Re-post the approvals and questions waiting in this channel',
      },
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'stop',
        description: 'Stop the turn the agent is working on in this channel',
      },
    ],
  },
];

/** Overwrites the application's commands: globally, or in one guild (visible at once, for development). */
export async function registerCommands(rest: REST, applicationId: string, guildId?: string): Promise<number> {
  const route = guildId
    ? Routes.applicationGuildCommands(applicationId, guildId)
    : Routes.applicationCommands(applicationId);
  const saved = (await rest.put(route, { body: agentCommands })) as unknown[];
  return saved.length;
}
