# payoutd: controllers and REST facade in one static binary.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY apiserver/ apiserver/
COPY controllers/ controllers/
COPY internal/ internal/
COPY cmd/ cmd/
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/payoutd ./cmd/payoutd

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/payoutd /payoutd
USER 65532:65532
ENTRYPOINT ["/payoutd"]
