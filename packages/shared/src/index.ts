export * from './reason-code.ts';
export * from './channel.ts';
export * from './http/common.schema.ts';
export * from './http/user.schema.ts';
export * from './http/channel.schema.ts';
export * from './http/message.schema.ts';
export * from './http/health.schema.ts';
export * from './http/top.schema.ts';
