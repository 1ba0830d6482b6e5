export * from './frame.ts';
export * from './params.ts';
export * from './recv.ts';
export * from './client.ts';
export * from './recvack.ts';
export * from './send.ts';
