export * from './jsonrpc/index.ts';
