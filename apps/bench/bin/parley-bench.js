#!/usr/bin/env node
// parley-bench runs its TypeScript sources directly: tsx compiles each module once at load.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
