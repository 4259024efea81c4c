/**
 * What iterating a stream throws when it closes before its end (node's
 * `ERR_STREAM_PREMATURE_CLOSE`): the readers that use stream events instead
 * of an async iterator reject with the same error.
 */
export function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}
