# syntax=docker/dockerfile:1
# payoutd: the controllers and the REST facade in one static binary (config/manager runs it as two
# Deployments). `make docker-build IMG=...`; config/image_test.go checks this file's paths.

# The Go of go.mod's go directive.
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
WORKDIR /src
COPY go.mod go.sum ./
# go.mod replaces the MCP SDK with its patched copy (third_party/go-sdk.patch)
COPY third_party/ third_party/
RUN --mount=type=cache,target=/go/pkg/mod go mod download
# Only what payoutd is built from (.dockerignore keeps the rest out of the context).
COPY api/ api/
COPY apiserver/ apiserver/
COPY controllers/ controllers/
COPY internal/ internal/
COPY cmd/ cmd/
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w" -o /out/payoutd ./cmd/payoutd

# Distroless: no shell, no package manager; CA certificates and tzdata only. Non-root (65532),
# as the Deployments' securityContext requires; the root filesystem can be read-only.
FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/payoutd /payoutd
USER 65532:65532
# API, metrics, probes (payoutd's defaults)
EXPOSE 8080 8081 8082
ENTRYPOINT ["/payoutd"]
