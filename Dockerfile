# Parley server image: `docker build -t parley .` (or `docker compose up`, see compose.yaml).
# Build stage: install every dependency, compile every workspace to dist/, then drop the
# development dependencies. Runtime stage: Node, the production dependencies and the compiled
# JavaScript only, run as the unprivileged `node` user with its data in the /data volume.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
# Compilers for packages/wkcrypto, packages/readpump and packages/sqlite-walbuf (always built from source) and for
# better-sqlite3, in case no prebuilt binary matches the platform.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The image has no git checkout: the commit `parley version` reports comes from this argument.
ARG BUILD_COMMIT=unknown
ENV BUILD_COMMIT=${BUILD_COMMIT} \
    ELECTRON_SKIP_BINARY_DOWNLOAD=1
COPY . .
# `npm ci` builds dist/ through the root `prepare` script.
RUN npm ci --no-audit --no-fund \
 && npm prune --omit=dev --no-audit --no-fund \
 && mkdir /out \
 && cp -r --parents package.json node_modules packages/*/package.json packages/*/dist \
      apps/*/package.json apps/*/bin apps/*/dist \
      packages/wkcrypto/index.cjs packages/wkcrypto/build/Release/wkcrypto.node \
      packages/readpump/index.cjs packages/readpump/build/Release/readpump.node \
      packages/sqlite-walbuf/index.cjs packages/sqlite-walbuf/build/Release/walbuf.node /out/

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    PARLEY_NODE_DATA_DIR=/data
WORKDIR /app
COPY --from=build /out/ ./
RUN mkdir /data && chown node:node /data
USER node
VOLUME ["/data"]
# HTTP API, TCP WKProto gateway, WebSocket gateway (WKProto and JSON-RPC).
EXPOSE 5001 5100 5200
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:5001/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["apps/server/bin/parley-node"]
CMD ["start"]
