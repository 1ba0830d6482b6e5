import { Type, type Static } from '@sinclair/typebox';

/** `GET /healthz`: the process answers. */
export const Healthz = Type.Object({ status: Type.Literal('ok') });

/** `GET /readyz`: 200 when ready, 503 with a reason when not. */
export const Readyz = Type.Object({
  ready: Type.Boolean(),
  reason: Type.Optional(Type.String()),
  parts: Type.Optional(Type.Record(Type.String(), Type.Boolean())),
});
export type Readyz = Static<typeof Readyz>;
