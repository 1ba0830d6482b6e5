/** The built extension (a shared library for `Database#loadExtension`), or undefined when it was not built. */
export const path: string | undefined;
/** Its SQLite entry point. */
export const entryPoint: string;
/** Why `path` is undefined. */
export const loadError: Error | undefined;
