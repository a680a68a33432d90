# The project image: one image, two roles (worker or gateway), chosen by the command. It runs compiled
# JavaScript (`npm run build`) and the prebuilt workflow bundle; TypeScript and the bundler stay in the
# build stage.
FROM node:24-slim AS build

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

COPY tsconfig.json tsconfig.build.json ./
COPY common ./common
COPY infra ./infra
COPY platforms ./platforms
COPY workflows ./workflows
COPY activities ./activities
COPY workers ./workers
COPY gateways ./gateways
COPY scripts ./scripts

# Compiled code (with the web chat's static files), then the workflow bundle: workers start in seconds and
# every replica runs byte-identical workflow code. The bundle is made from the TypeScript sources (./workflows),
# as `npm start` and the tests make it: webpack concatenates their ES modules, which the compiled CommonJS
# would not allow (about 30 KiB more per cached session, docs/BENCHMARKS.md).
RUN npm run build \
 && node dist/scripts/bundle-workflows.js dist/workflow-bundle.js workflows

FROM node:24-slim

WORKDIR /app
ENV NODE_ENV=production \
    DATA_DIR=/data \
    WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js

# bubblewrap: shell_execute runs every command in a bwrap sandbox (prlimit, setpriv and choom come with util-linux).
# As the unprivileged `node` user, bwrap needs user namespaces inside the container (capabilities such as
# CAP_SYS_ADMIN do not reach a non-root process), which Docker's defaults forbid: run the worker with
# seccomp=unconfined, apparmor=unconfined and systempaths=unconfined (for its own /proc), as
# docker-compose.yml does, on a host that allows unprivileged user namespaces (Ubuntu 24.04+:
# kernel.apparmor_restrict_unprivileged_userns=0). Otherwise the worker logs why at start and refuses shell
# commands.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap util-linux \
 && rm -rf /var/lib/apt/lists/*

COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data

USER node
VOLUME ["/data"]
EXPOSE 3000
CMD ["node", "dist/gateways/main.js"]
