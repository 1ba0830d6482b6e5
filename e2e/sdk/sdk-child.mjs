// One wukongimjssdk client per process (the SDK is a singleton). Driven by the
// parent over IPC; reports everything back as JSON messages:
//   parent → child: {cmd:'connect'} | {cmd:'sendText', reqId, channelId, channelType, text} | {cmd:'disconnect'}
//   child → parent: ready | status | message | sent | sendack | log | error (field `event`).
import { createRequire } from 'node:module';
import { WebSocket } from 'ws';

const send = (msg) => {
  if (process.connected) process.send(msg);
};
for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
  console[level] = (...args) => send({ event: 'log', line: args.map((a) => (typeof a === 'string' ? a : safeJson(a))).join(' ') });
}
function safeJson(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}
process.on('disconnect', () => process.exit(0));
process.on('uncaughtException', (e) => send({ event: 'error', message: String(e?.stack ?? e) }));
process.on('unhandledRejection', (e) => send({ event: 'error', message: String(e?.stack ?? e) }));

globalThis.WebSocket = WebSocket;
const require = createRequire(import.meta.url);
const WKSDK = require(process.env.PARLEY_WKSDK_BUNDLE).default;
const sdk = WKSDK.shared();
const opts = JSON.parse(process.env.PARLEY_WKSDK_OPTIONS);
sdk.config.addr = opts.wsAddr;
sdk.config.uid = opts.uid;
sdk.config.token = opts.token;
if (opts.deviceFlag !== undefined) sdk.config.deviceFlag = opts.deviceFlag;
if (opts.protoVersion !== undefined) sdk.config.protoVersion = opts.protoVersion;

const str = (v) => (v === undefined || v === null ? v : typeof v === 'object' && 'toFixed' in v ? v.toFixed() : String(v));

sdk.connectManager.addConnectStatusListener((status, reasonCode) => send({ event: 'status', status, reasonCode }));
sdk.chatManager.addMessageListener((m) => {
  if (m.messageID === undefined) return; // the SDK also echoes locally created (outgoing) messages here
  send({
    event: 'message',
    fromUID: m.fromUID,
    channelId: m.channel?.channelID,
    channelType: m.channel?.channelType,
    messageSeq: m.messageSeq,
    messageID: str(m.messageID),
    clientMsgNo: m.clientMsgNo,
    timestamp: m.timestamp,
    contentType: m.contentType,
    content: m.content?.contentObj ?? null,
    text: m.content?.text,
    header: { redDot: !!m.header?.reddot, noPersist: !!m.header?.noPersist, syncOnce: !!m.header?.syncOnce },
  });
});
sdk.chatManager.addMessageStatusListener((ack) => {
  send({
    event: 'sendack',
    clientSeq: ack.clientSeq,
    messageID: str(ack.messageID),
    messageSeq: ack.messageSeq,
    reasonCode: ack.reasonCode,
  });
});

process.on('message', async (cmd) => {
  try {
    if (cmd.cmd === 'connect') sdk.connect();
    else if (cmd.cmd === 'disconnect') sdk.disconnect();
    else if (cmd.cmd === 'sendText') {
      const m = await sdk.chatManager.send(sdk.newMessageText(cmd.text), sdk.newChannel(cmd.channelId, cmd.channelType));
      send({ event: 'sent', reqId: cmd.reqId, clientSeq: m.clientSeq, clientMsgNo: m.clientMsgNo });
    }
  } catch (e) {
    send({ event: 'error', reqId: cmd.reqId, message: String(e?.stack ?? e) });
  }
});
send({ event: 'ready', sdkProtoVersion: sdk.config.protoVersion });
