/**
 * The provider formats svc speaks (a leaf module: the request event names
 * them too). Each one is a folder of `src/formats/` registered in `FORMATS`.
 */
export type FormatName = 'messages' | 'chat' | 'responses';
