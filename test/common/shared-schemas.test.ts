import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sharedSchemas } from '../../common/shared-schemas';
import { sharedWorkflowModules } from '../../workers/workflow-code';
import { userMessageSchema } from '../../workflows/session/contract';

describe('shared schema groups', () => {
  it('builds a group once and hands every later caller the same schemas', () => {
    let builds = 0;
    const build = () => {
      builds += 1;
      return { name: z.string().min(1) };
    };
    const first = sharedSchemas('test-once', build);
    const second = sharedSchemas('test-once', build);
    expect(second.name).toBe(first.name);
    expect(builds).toBe(1);
    expect(second.name.safeParse('').success).toBe(false);
  });

  it('refuses a second, different group under a name already taken', () => {
    sharedSchemas('test-taken', () => ({ a: z.string() }));
    expect(() => sharedSchemas('test-taken', () => ({ a: z.number() }))).toThrow(
      'two different schema groups are called "test-taken"',
    );
  });

  it('keeps validating after use by many callers (zod completes a shared schema lazily, in place)', () => {
    const message = { messageId: 'm1', userId: 'alice', text: 'hi' };
    for (let i = 0; i < 3; i++) {
      expect(userMessageSchema.safeParse(message).success).toBe(true);
      const refused = userMessageSchema.safeParse({ ...message, text: '' });
      expect(refused.success).toBe(false);
      expect(refused.error?.issues[0]?.path).toEqual(['text']);
    }
  });
});

describe('modules every cached workflow shares', () => {
  // The SDK deep-freezes what a preloaded module exports, and zod completes a schema lazily in place: a frozen
  // schema throws at its first parse, inside a workflow task. So no preloaded module may export one.
  it('export no zod schema, at any depth', async () => {
    const found: string[] = [];
    const walk = (value: unknown, where: string, seen: Set<unknown>) => {
      if (!value || (typeof value !== 'object' && typeof value !== 'function') || seen.has(value)) return;
      seen.add(value);
      if ('_zod' in (value as object)) return void found.push(where);
      if (typeof value === 'object')
        for (const [key, inner] of Object.entries(value)) walk(inner, `${where}.${key}`, seen);
    };
    for (const module of sharedWorkflowModules)
      walk((await import(module)) as unknown, module.split('/').slice(-2).join('/'), new Set());
    expect(found).toEqual([]);
    expect(sharedWorkflowModules.length).toBeGreaterThan(1);
  });
});
