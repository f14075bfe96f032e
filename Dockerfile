# unlearn in a container: the binary and the ONNX Runtime library `make ort`
# fetches (npm pack onnxruntime-node, sha256-checked by scripts/fetch-ort.sh),
# on Debian, run as an unprivileged user (uid 10001). docs/CLUSTERS.md,
# "Scoring on a cluster", says how deploy/k8s runs `unlearn score` with it.
# Needs BuildKit (DOCKER_BUILDKIT=1 with docker 20.10; the default since 23).
#
# Where a registry is reachable: Go builds the binary in the first stage
# (golang image), on debian:bookworm-slim.
#   docker build -t unlearn:dev .
# Without a registry (what `make test-docker` does): the binary and .ort/
# this machine built (`make build ort`, Debian bookworm or older glibc) on a
# locally made Debian base, e.g. `debootstrap --variant=minbase bookworm DIR`
# then `tar -C DIR -c . | docker import - debian-local:bookworm`.
#   docker build --build-arg FILES=host --build-arg BASE=debian-local:bookworm -t unlearn:dev .
#
#   docker run --rm unlearn:dev version
#
# The images the build starts FROM are pinned by digest (a tag can move to
# other bytes; a digest cannot): the multi-platform index digests that
# docker-library/repo-info records for debian:bookworm-slim (built
# 2026-08-03; repos/debian/remote/bookworm-slim.md) and golang:1.26.8-bookworm
# (2026-09-19; repos/golang/remote/1.26.8-bookworm.md). To move to newer
# ones, look them up where a registry is reachable,
#   docker buildx imagetools inspect debian:bookworm-slim   (the "Digest:" line)
# and change the two ARGs, or pass them with --build-arg. Then push the image
# and deploy it by its own digest (deploy/k8s/image/kustomization.yaml).
ARG GO_IMAGE=golang:1.26.8-bookworm@sha256:f4191582e1522dfc5980a6bdc0309a756f9697f3e7d0f199c7e26fc82ab324fd
ARG BASE=debian:bookworm-slim@sha256:abd67ffcfa541b485a3dff59865ab629aa048a6c613e639d36e7456b0b229241
# Where /opt/unlearn comes from: built (the Go stage) or host (the build context).
ARG FILES=built

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
RUN CGO_ENABLED=1 go build -trimpath -ldflags "-X main.Version=${VERSION}" -o /out/opt/unlearn/bin/unlearn ./cmd/unlearn
# A .ort/ already in the build context is checked and kept; otherwise npm fetches it.
RUN if ! ./scripts/fetch-ort.sh; then \
      echo "fetch-ort.sh failed (its reason above); installing npm and trying again" >&2 && \
      apt-get update && apt-get install -y --no-install-recommends npm && ./scripts/fetch-ort.sh; fi
RUN mkdir -p /out/opt/unlearn/.ort /out/opt/unlearn/testdata && \
    cp .ort/libonnxruntime.so.1 /out/opt/unlearn/.ort/ && cp -r testdata/fashion /out/opt/unlearn/testdata/ && \
    chmod -R u=rwX,go=rX /out/opt

FROM scratch AS built
COPY --from=build /out/ /

FROM scratch AS host
COPY --chmod=0755 bin/unlearn /opt/unlearn/bin/unlearn
COPY --chmod=0644 .ort/libonnxruntime.so.1 /opt/unlearn/.ort/libonnxruntime.so.1
COPY --chmod=0644 testdata/fashion /opt/unlearn/testdata/fashion

FROM ${FILES} AS files

FROM ${BASE}
# The layout bin/unlearn expects: ../.ort/libonnxruntime.so.1 beside it (not
# writable by group or others, or the tool refuses it: the stages above set
# the modes, so no layer here copies the files again), and the bundled demo
# data as ../testdata/fashion (the default --data). The user is written into
# /etc/passwd directly: a minbase Debian has no useradd.
COPY --from=files /opt/unlearn /opt/unlearn
RUN echo 'unlearn:x:10001:10001:unlearn:/work:/usr/sbin/nologin' >>/etc/passwd && \
    echo 'unlearn:x:10001:' >>/etc/group && mkdir -p /work && chown 10001:10001 /work
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["/opt/unlearn/bin/unlearn"]
CMD ["help"]
