# One image for every Flotilla service and the member-cluster simulator:
#   docker build -t flotilla .
#   docker run flotilla services/gateway/dist/main.js
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json turbo.json tsconfig.base.json tsconfig.json ./
COPY proto ./proto
COPY packages ./packages
COPY services ./services
COPY test/package.json ./test/package.json
RUN npm ci --no-audit --no-fund
RUN TURBO_TELEMETRY_DISABLED=1 npx turbo run build --log-prefix=none
RUN npm prune --omit=dev
# joins the simulated members (the Kubernetes dev overlay's join-members Job); no dependencies
COPY scripts/join-members.mjs ./scripts/join-members.mjs
# a Pull member's agent identity (the CLI's register), and an agent beside a simulated member
COPY scripts/register-agent.mjs scripts/sim-agent.mjs ./scripts/
COPY examples/agent-rbac.yaml ./examples/agent-rbac.yaml

FROM node:24-bookworm-slim
# openssl: the gateway can create its own self-signed certificate (TLS_CERT_CREATE)
RUN apt-get update && apt-get install -y --no-install-recommends openssl && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/flotilla && chown node:node /var/lib/flotilla
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /src /app
USER node
ENTRYPOINT ["node"]
CMD ["services/gateway/dist/main.js"]
