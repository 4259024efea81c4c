import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** Files a model folder must hold. */
export const MODEL_FILES = ['config.json', 'tokenizer.json', 'model.onnx'] as const;

/** The command that installs the optional runtime. */
export const ML_INSTALL_HINT =
  'ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node @huggingface/tokenizers';

/**
 * Whether `name` resolves from here. Both optional packages have a CommonJS
 * entry, so `require.resolve` answers as resolving for an import would, and
 * also where this module runs bundled as a CommonJS script (scripts/bundle-cli.js).
 */
function resolvable(name: string): boolean {
  try {
    createRequire(import.meta.url).resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** True when both optional packages can be imported. Cheap: resolves, loads nothing. */
export function mlRuntimeInstalled(): boolean {
  return resolvable('onnxruntime-node') && resolvable('@huggingface/tokenizers');
}

/** The model files missing from `dir` (empty when complete). */
export function missingModelFiles(dir: string): string[] {
  return MODEL_FILES.filter((f) => !existsSync(join(dir, f)));
}

export interface MlStatusLine {
  level: 'info' | 'warn';
  text: string;
}

export interface MlStatusInput {
  enabled: boolean;
  device: string;
  rate: number;
  modelDir: string;
  installed?: boolean;
}

/**
 * The start-up line of spec section 1.9, before the model is loaded:
 * installed but not enabled -> a hint; enabled but not installed (or no model)
 * -> a warning naming the install command and the expected model path;
 * enabled and ready to load -> undefined (the loader prints the enabled line
 * with the device it actually got).
 */
export function mlPreflight(input: MlStatusInput): MlStatusLine | undefined {
  const installed = input.installed ?? mlRuntimeInstalled();
  if (!input.enabled) {
    return installed
      ? {
          level: 'info',
          text: 'ML compression: installed but not enabled (start with --mlcompress to use it)',
        }
      : undefined;
  }
  if (!installed) {
    return {
      level: 'warn',
      text: `ML compression: --mlcompress is on but its runtime is not installed; running without it. Install with: ${ML_INSTALL_HINT} (model expected in ${input.modelDir})`,
    };
  }
  const missing = missingModelFiles(input.modelDir);
  if (missing.length > 0) {
    return {
      level: 'warn',
      text: `ML compression: --mlcompress is on but no model was found in ${input.modelDir} (missing ${missing.join(', ')}); running without it. See the README section "ML compression" for compatible models.`,
    };
  }
  return undefined;
}

/** The line printed once the model is loaded. */
export function mlEnabledLine(device: string, rate: number): MlStatusLine {
  return { level: 'info', text: `ML compression: enabled (device=${device}, rate=${rate})` };
}
