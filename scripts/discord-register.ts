/** `npm run discord:register`: registers the /agent slash command for DISCORD_APPLICATION_ID. */
import { loadConfig } from '../infra/config';
import { registerCommands } from '../platforms/discord/commands';
import { discordRest } from '../platforms/discord/rest';

async function main(): Promise<void> {
  const { discord } = loadConfig();
  if (!discord || !discord.applicationId) {
    throw new Error(
      'Set DISCORD_BOT_TOKEN and DISCORD_APPLICATION_ID (the "Application ID" on your app\'s General Information page); DISCORD_GUILD_ID registers in one server only, which takes effect at once.',
    );
  }
  const count = await registerCommands(discordRest(discord), discord.applicationId, discord.guildId);
  console.log(
    `Registered ${count} command(s) ${discord.guildId ? `in guild ${discord.guildId}` : 'globally (may take up to an hour to appear)'}.`,
  );
}

main().catch((error: Error) => {
  console.error(`discord:register failed: ${error.message}`);
  process.exit(1);
});
