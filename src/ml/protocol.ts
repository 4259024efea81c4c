/** Messages between the main thread and the ML worker. */
export interface WorkerRequest {
  id: number;
  /** Words of each piece of content to classify. */
  pieces: string[][];
}

export type WorkerReply =
  | { type: 'ready'; provider: string; fellBack: string[]; loadMs: number }
  | { type: 'failed'; message: string }
  | { type: 'result'; id: number; probs: number[][] }
  | { type: 'error'; id: number; message: string };
