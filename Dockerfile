# syntax=docker/dockerfile:1
# Switchboard: one image for every role (`start --role all|gateway|worker`). It runs the compiled
# JavaScript (dist/); TypeScript and tsx stay in the build stage.

# ---- build: all packages, then tsc into dist/ ------------------------------------------------
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the `prepare` build needs src/, which is copied after this (cacheable) layer.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.js ./scripts/build.js
COPY src ./src
RUN npm run build

# ---- dependencies: production packages only ---------------------------------------------
FROM node:20-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Without the dev packages there is no compiler, so the `prepare` build is left to the build stage.
RUN npm pkg delete scripts.prepare && npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# ---- runtime ------------------------------------------------------------------------------
FROM node:20-slim AS runtime
# tini runs as PID 1: it forwards `docker stop`'s SIGTERM to Switchboard (which hands its threads
# over within runtime.shutdownGraceMs) and reaps what is left when a command tree is killed.
# bubblewrap is the sandbox every tool command runs in (docs/security.md); the container needs
# the security options docker-compose.yml sets for it (docs/deploy.md, "The tool sandbox").
# git and ca-certificates are for the agent's shell tool.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini ca-certificates git bubblewrap \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY --from=build /app/dist ./dist
COPY config ./config
# Sessions (embedded mode) and the agent's workspaces; mount volumes here.
RUN mkdir -p /app/data /app/workspace && chown -R node:node /app/data /app/workspace
USER node
EXPOSE 8787
# `health` asks /healthz at the address the config (and PORT) gives, so it follows the configured port.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "bin/switchboard.js", "health"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/switchboard.js"]
CMD ["start"]
