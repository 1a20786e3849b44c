# syntax=docker/dockerfile:1
# rocescope in a container: the full build with live capture (README.md, "Install").
#
#   docker build -t rocescope .
#   docker run --rm -u "$(id -u):$(id -g)" -v "$PWD:/data" rocescope analyze capture.pcap
#
# Live capture needs the host's network and the capture capabilities, which Docker grants to
# root only (it gives a non-root user no effective capabilities):
#
#   docker run --rm -u 0 --net=host --cap-add=NET_RAW --cap-add=NET_ADMIN -v "$PWD:/data" \
#       rocescope capture -i ens1f0 -w mirror.pcapng --duration 60s

# The builder: Rust on the Debian release the runtime runs, so that the binary links against the
# same glibc and libpcap; libpcap's development files for the `live` feature.
FROM rust:1-bookworm AS builder
RUN apt-get update \
    && apt-get install -y --no-install-recommends libpcap-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# the whole workspace: cargo reads every member's manifest and every target it declares
COPY . .
# the registry and the build directory are cached between builds (BuildKit), so the binary is
# copied out in the same step
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --features live -p rocescope \
    && cp target/release/rocescope /usr/local/bin/rocescope

# The runtime: the binary, libpcap and CA certificates, run as a user of its own.
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends libpcap0.8 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin rocescope
COPY --from=builder /usr/local/bin/rocescope /usr/local/bin/rocescope
USER rocescope
# the directory `-v "$PWD:/data"` mounts: file names on the command line are relative to it
WORKDIR /data
ENTRYPOINT ["rocescope"]
CMD ["--help"]
