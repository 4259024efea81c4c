/** What TOIN keeps per tool-output shape. Counts and field names only, never values. */
export interface ShapeRecord {
  tool: string;
  /** Field names of the shape (from its outputs' keys). */
  fields: string[];
  /** Times an output of this shape was compressed (per message, or harder by the context manager). */
  compressed: number;
  /** Times an output of this shape was dropped by the context manager. */
  dropped: number;
  /** Times a CCR entry holding this shape was retrieved. */
  retrieved: number;
  /** Field name -> times a retrieval query asked for it (`field=value`). */
  retrievedFields: Record<string, number>;
  firstSeen: string;
  lastSeen: string;
}

/** The TOIN file (`~/.svc/toin.json`). */
export interface ToinData {
  schema_version: 1;
  updated_at: string;
  shapes: Record<string, ShapeRecord>;
  /** CCR hash -> shape keys it holds, so a retrieval maps back to shapes. Bounded. */
  hashes: Record<string, string[]>;
}

/** Bounds of the TOIN file. */
export const MAX_SHAPES = 5000;
export const MAX_HASHES = 20_000;

/** An empty TOIN state. */
export function emptyToin(now: Date): ToinData {
  return { schema_version: 1, updated_at: now.toISOString(), shapes: {}, hashes: {} };
}
