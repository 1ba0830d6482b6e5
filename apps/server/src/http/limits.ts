/**
 * Body limits per operation, beyond the global `api.max_body_bytes`.
 * Credential, connection and conversation-state operations carry a few ids:
 * anything larger is not a mistake worth parsing.
 */
export const SMALL_BODY_BYTES = 64 * 1024;
