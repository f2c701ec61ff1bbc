# weft's image: a static binary on distroless (CA certificates, tzdata, a
# non-root user, no shell). `docker build --build-arg VERSION=$(git describe
# --tags --always) -t weft .`; the flags are `make build`'s (Makefile).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/weft ./cmd/weft

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/weft /usr/local/bin/weft
# 65532 is distroless' nonroot; numeric, so Kubernetes' runAsNonRoot can check it.
USER 65532:65532
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/weft"]
CMD ["serve"]
