# The project image: one image, two roles (worker or gateway), chosen by the command.
FROM node:24-slim

WORKDIR /app
ENV NODE_ENV=production \
    DATA_DIR=/data \
    WORKFLOW_BUNDLE_PATH=/app/workflow-bundle.js

# bubblewrap: shell_execute runs every command in a bwrap sandbox (prlimit comes with util-linux).
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

COPY common ./common
COPY workflows ./workflows
COPY activities ./activities
COPY workers ./workers
COPY gateways ./gateways
COPY scripts ./scripts
COPY tsconfig.json ./

# Prebuilt workflow bundle: workers start in seconds and every replica runs byte-identical workflow code.
RUN npx tsx scripts/bundle-workflows.ts /app/workflow-bundle.js \
 && mkdir -p /data && chown node:node /data

USER node
VOLUME ["/data"]
EXPOSE 3000
CMD ["npx", "tsx", "gateways/main.ts"]
