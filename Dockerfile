# Bastion's images, one Dockerfile with a target per image (make docker-build):
#   manager          the `bastion` binary with the console embedded
#   runner-ansible   bastion-runner + python, ansible-core, git, openssh-client
#   runner-terraform bastion-runner + terraform, git, openssh-client
#   runner-bash      bastion-runner + bash, git, openssh-client, curl, jq
# Every image runs as the unprivileged user 65532, the uid the Jobs and the
# Helm chart's security contexts ask for. Runner images have bastion-runner
# (`bastion runner` alone, without the manager's code) as their entrypoint:
# a Job passes `runner --input … --secrets … --work …`, which bastion-runner
# and bastion both take.

ARG GO_VERSION=1.26.8
ARG DEBIAN=bookworm

# --- the console (console/dist, embedded by go:embed) ---
FROM node:22-${DEBIAN}-slim AS console
WORKDIR /src/console
COPY console/package.json console/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY console/ ./
RUN npm run build

# --- the bastion and bastion-runner binaries (static, no cgo: SQLite is
# modernc.org/sqlite) ---
FROM golang:${GO_VERSION}-${DEBIAN} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
COPY --from=console /src/console/dist console/dist
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/bastion-dev/bastion/internal/version.Version=${VERSION}" \
      -o /out/bastion . \
 && CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/bastion-dev/bastion/internal/version.Version=${VERSION}" \
      -o /out/bastion-runner ./internal/cmd/bastion-runner

# --- terraform, built from its Go module like `make terraform` (1.5.7 is
# the last MPL-licensed release; override TERRAFORM_VERSION for another) ---
FROM golang:${GO_VERSION}-${DEBIAN} AS terraform
ARG TERRAFORM_VERSION=v1.5.7
RUN CGO_ENABLED=0 GOBIN=/out go install -trimpath -ldflags "-s -w" github.com/hashicorp/terraform@${TERRAFORM_VERSION}

# --- the manager: no shell, no package manager ---
FROM gcr.io/distroless/static-${DEBIAN}12:nonroot AS manager
COPY --from=build /out/bastion /bastion
USER 65532:65532
EXPOSE 3000 9418 8080 8081
ENTRYPOINT ["/bastion"]
CMD ["manager"]

# --- what every runner has: git and ssh for repositories and hosts ---
FROM debian:${DEBIAN}-slim AS runner-base
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git openssh-client \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 runner \
 && useradd --uid 65532 --gid 65532 --home-dir /bastion/work/home --no-create-home --shell /usr/sbin/nologin runner
COPY --from=build /out/bastion-runner /usr/local/bin/bastion-runner
WORKDIR /bastion/work
ENTRYPOINT ["/usr/local/bin/bastion-runner"]
CMD ["runner"]

FROM runner-base AS runner-ansible
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 ansible-core sshpass \
 && rm -rf /var/lib/apt/lists/*
USER 65532:65532

FROM runner-base AS runner-terraform
COPY --from=terraform /out/terraform /usr/local/bin/terraform
USER 65532:65532

FROM runner-base AS runner-bash
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash curl jq \
 && rm -rf /var/lib/apt/lists/*
USER 65532:65532
