# The image docs/examples/k8s-indexed-job.yaml runs: Debian packages plus the
# spdylab binary built from this repository.
#
#   docker build -t registry.example/spdylab:latest . && docker push registry.example/spdylab:latest
#
# The built-in server and model client need only `ip` (iproute2) at run time. For
# experiments with `server = "nginx"` (or apache, h2o, caddy) or `client = "chromium"`,
# add those Debian packages: --build-arg EXTRA_PACKAGES="nginx chromium".
# Pods need CAP_NET_ADMIN and CAP_SYS_ADMIN and /dev/net/tun (see the manifest).
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p spdylab

FROM debian:bookworm-slim
ARG EXTRA_PACKAGES=""
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      iproute2 ca-certificates procps $EXTRA_PACKAGES \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/spdylab /usr/local/bin/spdylab
CMD ["spdylab", "--help"]
