/**
 * Discord message components: the gate's buttons (Approve, Always, Deny…, Edit & approve…), a question's
 * select menus, Other… and Submit, and Connect. Decisions and drafts become signals; the rest open dialogs
 * or answer privately.
 */
import { InteractionResponseType, MessageFlags, type APIInteractionResponse } from 'discord-api-types/v10';
import { discordSessionWorkflowId } from './ids';
import { connectLinkReply } from './render';
import { ephemeral, type ControlContext, type InteractionDeps } from './interaction-context';
import { denyDialog, editDialog, otherDialog } from './interaction-dialogs';
import { decide, draft } from './interaction-verdict';

export async function component(deps: InteractionDeps, ctx: ControlContext): Promise<APIInteractionResponse> {
  const { custom, userId, interaction } = ctx;
  const workflowId = discordSessionWorkflowId(custom.channelId);
  const gateId = custom.gateId;
  switch (custom.action) {
    case 'approve':
      return await decide(deps, interaction, workflowId, { gateId, choice: 'approve', userId });
    case 'alwaysHere':
      return await decide(deps, interaction, workflowId, {
        gateId,
        choice: 'always',
        scope: 'session',
        userId,
      });
    case 'alwaysEverywhere':
      return await decide(deps, interaction, workflowId, { gateId, choice: 'always', scope: 'user', userId });
    case 'deny':
      return denyDialog(custom);
    case 'edit':
      return await editDialog(deps, custom);
    case 'other':
      return await otherDialog(deps, custom);
    case 'select':
      return await draft(deps, interaction, workflowId, {
        gateId,
        userId,
        picks: [{ index: custom.question!, selected: interaction.data?.values ?? [] }],
      });
    case 'submit':
      return await draft(deps, interaction, workflowId, { gateId, userId, submit: true });
    case 'connect':
      return connectLink(deps, userId, custom.provider!);
    default:
      return ephemeral('That control is not one of ours or is malformed; nothing was done.');
  }
}

/** The clicker's own sign-in link, privately. */
function connectLink(deps: InteractionDeps, userId: string, provider: string): APIInteractionResponse {
  const link = deps.connect(userId, provider);
  if (!link) return ephemeral(`No provider "${provider}" is configured on this gateway.`);
  return {
    type: InteractionResponseType.ChannelMessageWithSource,
    data: { ...connectLinkReply(link.providerName, link.url), flags: MessageFlags.Ephemeral },
  };
}
