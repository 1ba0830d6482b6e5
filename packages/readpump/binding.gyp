{
  "targets": [
    {
      "target_name": "readpump",
      "sources": ["src/readpump.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Werror"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
