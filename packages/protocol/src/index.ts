export * from './jsonrpc/index.ts';
export * from './wkproto/index.ts';
