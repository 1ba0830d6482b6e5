import { Type, type Static } from '@sinclair/typebox';

const Opt = Type.Optional;
const Str = Type.String;
const Int = Type.Integer;
const Flag = Opt(Type.Boolean());
/** Bench version tag carried by most responses. */
export const BENCH_VERSION = 'bench/v1';

const Batch = { run_id: Opt(Str()), batch_id: Opt(Str()), upsert: Opt(Type.Boolean()) };

export const BenchUser = Type.Object({
  uid: Str({ minLength: 1 }),
  token: Str({ minLength: 1 }),
  device_flag: Opt(Int({ minimum: 0, maximum: 255 })),
  device_level: Opt(Int({ minimum: 0, maximum: 255 })),
});
/** `POST /bench/v1/users/tokens`: `users` wins over `items` when non-empty. */
export const BenchUsersTokensBody = Type.Object({ ...Batch, users: Opt(Type.Array(BenchUser)), items: Opt(Type.Array(BenchUser)) });
export type BenchUsersTokensBody = Static<typeof BenchUsersTokensBody>;

export const BenchChannel = Type.Object({
  channel_id: Str({ minLength: 1 }),
  channel_type: Int({ minimum: 1, maximum: 255 }),
  large: Flag,
  ban: Flag,
  disband: Flag,
  send_ban: Flag,
  allow_stranger: Flag,
});
export const BenchChannelsBody = Type.Object({ ...Batch, channels: Opt(Type.Array(BenchChannel)), items: Opt(Type.Array(BenchChannel)) });
export type BenchChannelsBody = Static<typeof BenchChannelsBody>;

export const BenchSubscriberItem = Type.Object({
  channel_id: Str({ minLength: 1 }),
  channel_type: Int({ minimum: 1, maximum: 255 }),
  reset: Flag,
  subscribers: Type.Array(Str({ minLength: 1 })),
});
/** `POST /bench/v1/channels/subscribers` and `/remove`. */
export const BenchSubscribersBody = Type.Object({ ...Batch, items: Opt(Type.Array(BenchSubscriberItem)) });
export type BenchSubscribersBody = Static<typeof BenchSubscribersBody>;

/** `{run_id, batch_id, accepted}` (+ `accepted_subscribers` for subscriber batches). */
export const BenchBatchResult = Type.Object({ run_id: Str(), batch_id: Str(), accepted: Int(), accepted_subscribers: Opt(Int()) });

const Range = Type.Object({ start: Int({ minimum: 0 }), end: Int({ minimum: 1 }) }, { additionalProperties: false });
/**
 * Generated selector of the channel-runtime routes. Parley names the
 * generated channels `<run_id>-<profile>-<index>` for index in [start, end).
 */
export const BenchGenerated = { run_id: Str(), profile: Str(), channel_type: Int({ minimum: 0, maximum: 255 }), range: Range };
export const BenchProbeBody = Type.Object(
  {
    run_id: Opt(Str()),
    profile: Opt(Str()),
    channel_type: Opt(Int({ minimum: 0, maximum: 255 })),
    range: Opt(Range),
    channels: Opt(
      Type.Array(
        Type.Object(
          { channel_id: Str({ minLength: 1 }), channel_type: Int({ minimum: 0, maximum: 255 }) },
          { additionalProperties: false },
        ),
        { maxItems: 1200 },
      ),
    ),
  },
  { additionalProperties: false },
);
export type BenchProbeBody = Static<typeof BenchProbeBody>;
export const BenchEvictBody = Type.Object(BenchGenerated, { additionalProperties: false });
export type BenchEvictBody = Static<typeof BenchEvictBody>;

export const BenchRuntimeQuery = Type.Object({
  run_id: Opt(Str()),
  profile: Opt(Str()),
  channel_type: Opt(Str()),
  start: Opt(Str()),
  end: Opt(Str()),
});
export type BenchRuntimeQuery = Static<typeof BenchRuntimeQuery>;

/** The bench error envelope `{status, msg}`, plus Parley's `code`. */
export const BenchError = Type.Object({ status: Int(), msg: Str(), code: Str() });
