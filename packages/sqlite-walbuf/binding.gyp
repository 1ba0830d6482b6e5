{
  "targets": [
    {
      "target_name": "walbuf",
      "sources": ["src/walbuf.c"],
      "include_dirs": ["<!(node -p \"require('node:path').join(require('node:path').dirname(require.resolve('better-sqlite3/package.json')), 'deps', 'sqlite3')\")"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Werror", "-std=gnu11"]
    }
  ]
}
