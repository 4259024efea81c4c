import { shapeAdvice } from './advice.js';
import type { ToinData } from './types.js';

/** One row of what TOIN learned, as `GET /v1/toin` and `svc toin` show it. */
export interface ToinShapeView {
  shape: string;
  tool: string;
  fields: string[];
  compressed: number;
  dropped: number;
  retrieved: number;
  /** retrieved / (compressed + dropped); null before anything was compressed or dropped. */
  retrieval_rate: number | null;
  retrieved_fields: Record<string, number>;
  /** null: not enough evidence yet (neutral). */
  importance: number | null;
  keep_factor: number | null;
  last_seen: string;
}

export interface ToinView {
  schema_version: 1;
  path: string;
  updated_at: string;
  shapes: ToinShapeView[];
}

/** The TOIN state as a report: shapes sorted by activity (most events first). */
export function toinView(data: ToinData, path: string): ToinView {
  const shapes = Object.entries(data.shapes).map(([shape, r]): ToinShapeView => {
    const advice = shapeAdvice(r);
    const seen = r.compressed + r.dropped;
    return {
      shape,
      tool: r.tool,
      fields: r.fields,
      compressed: r.compressed,
      dropped: r.dropped,
      retrieved: r.retrieved,
      retrieval_rate: seen > 0 ? Math.round((r.retrieved / seen) * 1000) / 1000 : null,
      retrieved_fields: r.retrievedFields,
      importance: advice?.importance ?? null,
      keep_factor: advice?.keepFactor ?? null,
      last_seen: r.lastSeen,
    };
  });
  shapes.sort(
    (a, b) =>
      b.compressed + b.dropped + b.retrieved - (a.compressed + a.dropped + a.retrieved) ||
      a.shape.localeCompare(b.shape),
  );
  return { schema_version: 1, path, updated_at: data.updated_at, shapes };
}
