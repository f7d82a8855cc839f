module spdylab/interop/go-spdy

go 1.21

require github.com/moby/spdystream v0.5.0
