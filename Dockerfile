# The project image: one image, two roles (worker or gateway), chosen by the command.
FROM node:24-slim

WORKDIR /app
ENV NODE_ENV=production \
    DATA_DIR=/data \
    WORKFLOW_BUNDLE_PATH=/app/workflow-bundle.js

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
