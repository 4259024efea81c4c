#!/usr/bin/env node
import { execute, settings } from '@oclif/core';

// The commands always run from the compiled dist/: never look for a
// TypeScript toolchain, whatever NODE_ENV says (oclif would under
// "development" or "test", and warn when it is not installed).
settings.enableAutoTranspile = false;

await execute({ dir: import.meta.url });
