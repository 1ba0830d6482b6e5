{
  "targets": [
    {
      "target_name": "wkcrypto",
      "sources": ["src/wkcrypto.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Werror"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
