# syntax=docker/dockerfile:1
# unlearn in a container: the binary (built with Go in the first stage) and
# the ONNX Runtime library `make ort` fetches (npm pack onnxruntime-node,
# sha256-checked by scripts/fetch-ort.sh), on Debian. docs/CLUSTERS.md,
# "Scoring on a cluster", says how deploy/k8s runs `unlearn score` with it.
#
#   docker build -t unlearn:dev .
#   docker run --rm unlearn:dev version
ARG GO_VERSION=1.26.8
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
RUN CGO_ENABLED=1 go build -trimpath -ldflags "-X main.Version=${VERSION}" -o /out/bin/unlearn ./cmd/unlearn
# A .ort/ already in the build context is checked and kept; otherwise npm fetches it.
RUN ./scripts/fetch-ort.sh 2>/dev/null || \
    (apt-get update && apt-get install -y --no-install-recommends npm && ./scripts/fetch-ort.sh)

FROM debian:bookworm-slim
# The layout bin/unlearn expects: ../.ort/libonnxruntime.so.1 beside it (not
# writable by group or others, or the tool refuses it), and the bundled demo
# data as ../testdata/fashion (the default --data).
COPY --from=build /out/bin/unlearn /opt/unlearn/bin/unlearn
COPY --from=build --chmod=0644 /src/.ort/libonnxruntime.so.1 /opt/unlearn/.ort/libonnxruntime.so.1
COPY --from=build /src/testdata/fashion /opt/unlearn/testdata/fashion
RUN chmod 0755 /opt/unlearn/.ort && useradd --uid 10001 --create-home unlearn
USER 10001
WORKDIR /work
ENTRYPOINT ["/opt/unlearn/bin/unlearn"]
CMD ["help"]
