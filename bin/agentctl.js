#!/usr/bin/env node
// The installed `agentctl` command: runs the TypeScript entry point through tsx.
require('tsx/cjs');
require('../scripts/agentctl/main.ts');
