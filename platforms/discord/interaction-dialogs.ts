/**
 * Discord dialogs (modals): Deny… asks for a reason, Edit & approve… and Other… are built from the gate's
 * memo, which the server serves while no worker runs; their submissions become signals.
 */
import { InteractionResponseType, type APIInteractionResponse } from 'discord-api-types/v10';
import type { GatePrompt } from '../../gateways/sessions';
import { argsTooLarge, editableArgs } from '../../gateways/dialog-args';
import { discordSessionWorkflowId, type DiscordCustomId } from './ids';
import { answerModal, denyModal, DISCORD_ARGS_LIMIT, editModal } from './render';
import { ephemeral, type ControlContext, type InteractionDeps } from './interaction-context';
import { decide, draft } from './interaction-verdict';

/** A dialog's memo read is bounded well inside Discord's 3 s (see SIGNAL_BUDGET_MS). */
const DIALOG_BUDGET_MS = 800;

const NOT_OPEN =
  "This is not open here, or the agent's server cannot be reached right now; try again in a moment.";

/** Every text input of a submitted modal, by custom_id, whatever the layout (labels or action rows). */
export function modalValues(components: unknown): Map<string, string> {
  const values = new Map<string, string>();
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const n = node as { custom_id?: unknown; value?: unknown; component?: unknown; components?: unknown };
    if (typeof n.custom_id === 'string' && typeof n.value === 'string') values.set(n.custom_id, n.value);
    visit(n.component);
    if (Array.isArray(n.components)) n.components.forEach(visit);
  };
  if (Array.isArray(components)) components.forEach(visit);
  return values;
}

/** A dialog is built from the gate's memo, which the server serves while no worker runs. */
async function gatePrompt(
  { sessions, log }: InteractionDeps,
  workflowId: string,
  gateId: string,
): Promise<GatePrompt | undefined> {
  return await sessions.gatePrompt(workflowId, gateId, DIALOG_BUDGET_MS).catch((error: Error) => {
    log.warn('discord dialog not opened', { workflowId, error: error.message });
    return undefined;
  });
}

export function denyDialog(custom: DiscordCustomId): APIInteractionResponse {
  return { type: InteractionResponseType.Modal, data: denyModal(custom.channelId, custom.gateId) };
}

export async function editDialog(
  deps: InteractionDeps,
  custom: DiscordCustomId,
): Promise<APIInteractionResponse> {
  const workflowId = discordSessionWorkflowId(custom.channelId);
  const gate = await gatePrompt(deps, workflowId, custom.gateId);
  if (gate?.kind !== 'approval') return ephemeral(NOT_OPEN);
  const args = editableArgs(gate.args, DISCORD_ARGS_LIMIT);
  if (args === undefined) return ephemeral(argsTooLarge(gate.toolName, gate.argsChars, DISCORD_ARGS_LIMIT));
  return {
    type: InteractionResponseType.Modal,
    data: editModal(custom.channelId, { id: custom.gateId, toolName: gate.toolName, args }),
  };
}

export async function otherDialog(
  deps: InteractionDeps,
  custom: DiscordCustomId,
): Promise<APIInteractionResponse> {
  const workflowId = discordSessionWorkflowId(custom.channelId);
  const gate = await gatePrompt(deps, workflowId, custom.gateId);
  if (gate?.kind !== 'question') return ephemeral(NOT_OPEN);
  return { type: InteractionResponseType.Modal, data: answerModal(custom.channelId, gate) };
}

export async function modalSubmit(
  deps: InteractionDeps,
  ctx: ControlContext,
): Promise<APIInteractionResponse> {
  const { custom, userId, interaction } = ctx;
  const workflowId = discordSessionWorkflowId(custom.channelId);
  const values = modalValues(interaction.data?.components);
  switch (custom.action) {
    case 'denyModal': {
      const reason = values.get('reason')?.trim().slice(0, 2_000);
      return await decide(deps, interaction, workflowId, {
        gateId: custom.gateId,
        choice: 'deny',
        userId,
        ...(reason ? { reason } : {}),
      });
    }
    case 'editModal': {
      const text = values.get('args') ?? '';
      const args = parseJsonObject(text);
      if (!args)
        return ephemeral(
          `Those arguments are not a JSON object (e.g. {"command": "ls"}); nothing was approved. What you entered:\n\`\`\`${text.slice(0, 1_700)}\`\`\``,
        );
      return await decide(deps, interaction, workflowId, {
        gateId: custom.gateId,
        choice: 'edit',
        args,
        userId,
      });
    }
    case 'answerModal': {
      const texts = [...values]
        .filter(([key, value]) => /^[0-4]$/.test(key) && value.trim())
        .map(([key, value]) => ({ index: Number(key), text: value.trim().slice(0, 2_000) }));
      if (!texts.length) return ephemeral('No answer was entered; the question is still open.');
      return await draft(deps, interaction, workflowId, { gateId: custom.gateId, userId, texts });
    }
    default:
      return ephemeral('That form is not one of ours or is malformed; nothing was done.');
  }
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
