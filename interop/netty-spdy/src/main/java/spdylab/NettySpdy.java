// NettySpdy: an independent SPDY/3.1 peer for spdylab's interop tests, on
// Netty's SPDY codec (SpdyFrameCodec, SpdySessionHandler with its own flow
// control, SpdyHttpEncoder/Decoder; SpdyVersion.SPDY_3_1), over TLS with the
// JDK's ALPN offering only "spdy/3.1". Nothing here comes from spdylab's code.
//
//   client ADDR:PORT HOST OUTDIR [--concurrency N] [--ignore-stream-limit] [--pushes N] PATH...
//       fetch each path on one session (Netty's default 64 KiB windows, at most
//       N streams at once, default 16) into OUTDIR/<n>; print one line per path:
//       "<path> <status> <length> <sha256>", or "<path> RST_STREAM <status>" for a
//       stream the server reset.
//       --ignore-stream-limit: a client that breaks the rules on purpose. The
//       server's SETTINGS_MAX_CONCURRENT_STREAMS is taken out of its SETTINGS
//       before Netty's session sees it (so Netty does not hold back), and every
//       path is requested at once, in one write; prints first
//       "settings MAX_CONCURRENT_STREAMS <n>" (what the server advertised, or -1).
//   server ADDR:PORT DOCROOT CERT.pem KEY.pem
//       serve DOCROOT/<host>/<path> (index.html for a path ending in /) until
//       killed; print "listening <port>" once bound (port 0 picks one)
//   vector
//       print, in hex, the bytes of two SYN_STREAM frames Netty encodes on one
//       session (a known vector for spdylab's codec tests)
package spdylab;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.spdy.DefaultSpdySynStreamFrame;
import io.netty.handler.codec.spdy.SpdyFrameCodec;
import io.netty.handler.codec.spdy.SpdyHttpDecoder;
import io.netty.handler.codec.spdy.SpdyHttpEncoder;
import io.netty.handler.codec.spdy.SpdyHttpHeaders;
import io.netty.handler.codec.spdy.SpdyHttpResponseStreamIdHandler;
import io.netty.handler.codec.spdy.SpdyRstStreamFrame;
import io.netty.handler.codec.spdy.SpdySessionHandler;
import io.netty.handler.codec.spdy.SpdySettingsFrame;
import io.netty.handler.codec.spdy.SpdySynStreamFrame;
import io.netty.handler.codec.spdy.SpdyVersion;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

public final class NettySpdy {
    static final SpdyVersion V = SpdyVersion.SPDY_3_1;
    static final int MAX_BODY = 64 * 1024 * 1024;

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            usage();
        }
        switch (args[0]) {
            case "client" -> {
                if (args.length < 4) usage();
                int concurrency = 16;
                int pushes = 0;
                boolean ignoreLimit = false;
                List<String> paths = new ArrayList<>();
                for (int i = 4; i < args.length; i++) {
                    if (args[i].equals("--concurrency") && i + 1 < args.length) {
                        concurrency = Integer.parseInt(args[++i]);
                    } else if (args[i].equals("--ignore-stream-limit")) {
                        ignoreLimit = true;
                    } else if (args[i].equals("--pushes") && i + 1 < args.length) {
                        pushes = Integer.parseInt(args[++i]);
                    } else {
                        paths.add(args[i]);
                    }
                }
                System.exit(client(args[1], args[2], Paths.get(args[3]), concurrency, ignoreLimit, pushes, paths));
            }
            case "server" -> {
                if (args.length != 5) usage();
                server(args[1], Paths.get(args[2]), new File(args[3]), new File(args[4]));
            }
            case "vector" -> vector();
            default -> usage();
        }
    }

    static void usage() {
        System.err.println("usage: client ADDR:PORT HOST OUTDIR [--concurrency N] [--ignore-stream-limit] [--pushes N] PATH... | server ADDR:PORT DOCROOT CERT KEY | vector");
        System.exit(2);
    }

    static ApplicationProtocolConfig alpn() {
        return new ApplicationProtocolConfig(
                ApplicationProtocolConfig.Protocol.ALPN,
                ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                ApplicationProtocolNames.SPDY_3_1);
    }

    static String[] hostPort(String addr) {
        int i = addr.lastIndexOf(':');
        return new String[] {addr.substring(0, i), addr.substring(i + 1)};
    }

    // ---- client ----

    static final class Fetch {
        final String path;
        /** The response, or null when the server reset the stream (see `reset`). */
        final CompletableFuture<FullHttpResponse> done = new CompletableFuture<>();
        volatile String reset;
        Fetch(String path) { this.path = path; }
    }

    /** Takes SETTINGS_MAX_CONCURRENT_STREAMS out of the server's SETTINGS, noting its value. */
    static final class HideStreamLimit extends ChannelInboundHandlerAdapter {
        final CompletableFuture<Integer> advertised = new CompletableFuture<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof SpdySettingsFrame s) {
                int n = s.getValue(SpdySettingsFrame.SETTINGS_MAX_CONCURRENT_STREAMS);
                s.removeValue(SpdySettingsFrame.SETTINGS_MAX_CONCURRENT_STREAMS);
                advertised.complete(n);
            }
            ctx.fireChannelRead(msg);
        }
    }

    /**
     * The client: GETs `paths`, `concurrency` streams at a time, and prints one line per
     * response (path, status, length, SHA-256), its body in OUTDIR/N. With `--pushes N` it
     * then waits for N pushed responses (server-initiated streams, which Netty's
     * SpdyHttpDecoder turns into the promised request and its response) and prints each as
     * `push PATH STATUS LENGTH SHA-256 ASSOCIATED-STREAM`, in stream order.
     */
    static int client(String addr, String host, Path outdir, int concurrency, boolean ignoreLimit,
                      int pushes, List<String> paths) throws Exception {
        SslContext ssl = SslContextBuilder.forClient()
                .sslProvider(SslProvider.JDK)
                .trustManager(InsecureTrustManagerFactory.INSTANCE) // the testbed's own CA
                .applicationProtocolConfig(alpn())
                .build();
        String[] hp = hostPort(addr);
        int port = Integer.parseInt(hp[1]);
        List<Fetch> fetches = new ArrayList<>();
        for (String p : paths) fetches.add(new Fetch(p));
        HideStreamLimit hide = new HideStreamLimit();
        // Pushed streams: their promised path and associated stream, then their response.
        java.util.Map<Integer, String[]> promised = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.Map<Integer, FullHttpResponse> pushed = new java.util.concurrent.ConcurrentSkipListMap<>();
        java.util.concurrent.CountDownLatch pushesDone = new java.util.concurrent.CountDownLatch(pushes);
        if (ignoreLimit) concurrency = Integer.MAX_VALUE;
        EventLoopGroup group = new NioEventLoopGroup(1);
        try {
            Channel ch = new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel c) {
                            ChannelPipeline p = c.pipeline();
                            p.addLast(ssl.newHandler(c.alloc(), host, port)); // SNI = host
                            p.addLast(new SpdyFrameCodec(V));
                            if (ignoreLimit) p.addLast(hide);
                            p.addLast(new SpdySessionHandler(V, false));
                            // A reset stream has no response for SpdyHttpDecoder to pass on: note it here.
                            p.addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    if (msg instanceof SpdyRstStreamFrame r) {
                                        int n = (r.streamId() - 1) / 2;
                                        if (r.streamId() > 0 && n < fetches.size()) {
                                            fetches.get(n).reset = r.status().toString();
                                            fetches.get(n).done.complete(null);
                                        }
                                    }
                                    ctx.fireChannelRead(msg);
                                }
                            });
                            p.addLast(new SpdyHttpEncoder(V));
                            p.addLast(new SpdyHttpDecoder(V, MAX_BODY));
                            p.addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    if (msg instanceof FullHttpRequest req) {
                                        // A push's promised request (server-initiated stream).
                                        int id = req.headers().getInt(SpdyHttpHeaders.Names.STREAM_ID, -1);
                                        int assoc = req.headers().getInt(SpdyHttpHeaders.Names.ASSOCIATED_TO_STREAM_ID, -1);
                                        promised.put(id, new String[] {req.uri(), Integer.toString(assoc)});
                                        req.release();
                                        return;
                                    }
                                    ctx.fireChannelRead(msg);
                                }
                            });
                            p.addLast(new SimpleChannelInboundHandler<FullHttpResponse>() {
                                @Override
                                protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse r) {
                                    int id = r.headers().getInt(SpdyHttpHeaders.Names.STREAM_ID, -1);
                                    if (id > 0 && id % 2 == 0) {
                                        pushed.put(id, r.retainedDuplicate());
                                        pushesDone.countDown();
                                        return;
                                    }
                                    int n = (id - 1) / 2;
                                    if (id > 0 && n < fetches.size()) {
                                        fetches.get(n).done.complete(r.retainedDuplicate());
                                    }
                                }

                                @Override
                                public void exceptionCaught(ChannelHandlerContext ctx, Throwable e) {
                                    for (Fetch f : fetches) f.done.completeExceptionally(e);
                                    ctx.close();
                                }

                                @Override
                                public void channelInactive(ChannelHandlerContext ctx) {
                                    for (Fetch f : fetches) f.done.completeExceptionally(new Exception("session closed"));
                                }
                            });
                        }
                    })
                    .connect(hp[0], port).sync().channel();
            SslHandler tls = ch.pipeline().get(SslHandler.class);
            tls.handshakeFuture().sync();
            if (!ApplicationProtocolNames.SPDY_3_1.equals(tls.applicationProtocol())) {
                System.err.println("ALPN negotiated " + tls.applicationProtocol() + ", not spdy/3.1");
                return 1;
            }
            int sent = 0;
            int finished = 0;
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            Files.createDirectories(outdir);
            if (ignoreLimit) {
                // The server's SETTINGS come first on the session: wait for them, so
                // that Netty has seen (and not learnt) the limit before we write.
                int n = hide.advertised.get(60, TimeUnit.SECONDS);
                System.out.println("settings MAX_CONCURRENT_STREAMS " + n);
            }
            while (finished < fetches.size()) {
                // Keep at most `concurrency` streams open (all at once, in one write, when
                // ignoring the server's limit).
                while (sent < fetches.size() && sent - finished < concurrency) {
                    Fetch f = fetches.get(sent);
                    FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, f.path);
                    req.headers().set(HttpHeaderNames.HOST, host);
                    req.headers().set(SpdyHttpHeaders.Names.STREAM_ID, 2 * sent + 1);
                    req.headers().set(SpdyHttpHeaders.Names.PRIORITY, 3);
                    req.headers().set(SpdyHttpHeaders.Names.SCHEME, "https");
                    ch.write(req).addListener(w -> {
                        if (!w.isSuccess()) f.done.completeExceptionally(w.cause());
                    });
                    sent++;
                }
                ch.flush();
                Fetch f = fetches.get(finished);
                FullHttpResponse r = f.done.get(60, TimeUnit.SECONDS);
                if (r == null) {
                    System.out.println(f.path + " RST_STREAM " + f.reset);
                    finished++;
                    continue;
                }
                byte[] body = ByteBufUtil.getBytes(r.content());
                r.release();
                Files.write(outdir.resolve(Integer.toString(finished)), body);
                System.out.println(f.path + " " + r.status().code() + " " + body.length + " "
                        + HexFormat.of().formatHex(sha.digest(body)));
                finished++;
            }
            if (pushes > 0 && !pushesDone.await(60, TimeUnit.SECONDS)) {
                System.err.println("netty-spdy client: " + pushed.size() + " of " + pushes + " pushes came");
                return 1;
            }
            for (var e : pushed.entrySet()) {
                String[] p = promised.getOrDefault(e.getKey(), new String[] {"?", "?"});
                byte[] body = ByteBufUtil.getBytes(e.getValue().content());
                e.getValue().release();
                System.out.println("push " + p[0] + " " + e.getValue().status().code() + " " + body.length + " "
                        + HexFormat.of().formatHex(sha.digest(body)) + " " + p[1]);
            }
            ch.close().sync();
            return 0;
        } catch (Exception e) {
            System.err.println("netty-spdy client: " + e);
            return 1;
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    // ---- server ----

    static void server(String addr, Path docroot, File cert, File key) throws Exception {
        SslContext ssl = SslContextBuilder.forServer(cert, key)
                .sslProvider(SslProvider.JDK)
                .applicationProtocolConfig(alpn())
                .build();
        String[] hp = hostPort(addr);
        EventLoopGroup group = new NioEventLoopGroup(2);
        Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        c.pipeline().addLast(ssl.newHandler(c.alloc()));
                        c.pipeline().addLast(new ApplicationProtocolNegotiationHandler("none") {
                            @Override
                            protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
                                if (!ApplicationProtocolNames.SPDY_3_1.equals(protocol)) {
                                    ctx.close(); // we speak nothing else
                                    return;
                                }
                                ChannelPipeline p = ctx.pipeline();
                                p.addLast(new SpdyFrameCodec(V));
                                p.addLast(new SpdySessionHandler(V, true));
                                p.addLast(new SpdyHttpEncoder(V));
                                p.addLast(new SpdyHttpDecoder(V, MAX_BODY));
                                p.addLast(new SpdyHttpResponseStreamIdHandler());
                                p.addLast(new FileHandler(docroot));
                            }
                        });
                    }
                })
                .bind(hp[0], Integer.parseInt(hp[1])).sync().channel();
        int port = ((java.net.InetSocketAddress) server.localAddress()).getPort();
        System.out.println("listening " + port);
        System.out.flush();
        server.closeFuture().sync();
    }

    static final class FileHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
        final Path docroot;
        FileHandler(Path docroot) { this.docroot = docroot.toAbsolutePath().normalize(); }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) throws Exception {
            String host = req.headers().get(HttpHeaderNames.HOST, "");
            int colon = host.lastIndexOf(':');
            if (colon > 0 && host.indexOf(']') < colon) host = host.substring(0, colon);
            String path = req.uri();
            int q = path.indexOf('?');
            if (q >= 0) path = path.substring(0, q);
            if (path.endsWith("/")) path += "index.html";
            Path file = docroot.resolve(host).resolve(path.substring(1)).normalize();
            FullHttpResponse resp;
            if (!file.startsWith(docroot) || !Files.isRegularFile(file)) {
                resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NOT_FOUND,
                        Unpooled.copiedBuffer("not found\n".getBytes()));
                resp.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain");
            } else {
                byte[] body = Files.readAllBytes(file);
                resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                        Unpooled.wrappedBuffer(body));
                resp.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType(file.toString()));
            }
            resp.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, resp.content().readableBytes());
            resp.headers().set(SpdyHttpHeaders.Names.STREAM_ID, req.headers().get(SpdyHttpHeaders.Names.STREAM_ID));
            ctx.writeAndFlush(resp);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable e) {
            System.err.println("netty-spdy server: " + e);
            ctx.close();
        }
    }

    static String contentType(String name) {
        String ext = name.substring(name.lastIndexOf('.') + 1).toLowerCase();
        return switch (ext) {
            case "html", "htm" -> "text/html; charset=utf-8";
            case "css" -> "text/css";
            case "js" -> "application/javascript";
            case "png" -> "image/png";
            case "gif" -> "image/gif";
            case "jpg", "jpeg" -> "image/jpeg";
            case "svg" -> "image/svg+xml";
            case "ico" -> "image/x-icon";
            case "json" -> "application/json";
            case "woff" -> "font/woff";
            case "woff2" -> "font/woff2";
            default -> "application/octet-stream";
        };
    }

    // ---- vector ----

    static void vector() {
        EmbeddedChannel ch = new EmbeddedChannel(new SpdyFrameCodec(V));
        String[][] paths = {{"1", "/"}, {"3", "/s/yt/img/pixel.gif"}};
        for (String[] sp : paths) {
            SpdySynStreamFrame f = new DefaultSpdySynStreamFrame(Integer.parseInt(sp[0]), 0, (byte) 0);
            f.setLast(true);
            f.headers().set(":method", "GET");
            f.headers().set(":path", sp[1]);
            f.headers().set(":version", "HTTP/1.1");
            f.headers().set(":host", "www.youtube.spdylab.test");
            f.headers().set(":scheme", "https");
            f.headers().set("user-agent", "spdylab/0.1");
            ch.writeOutbound(f);
            StringBuilder hex = new StringBuilder();
            ByteBuf b;
            while ((b = ch.readOutbound()) != null) {
                hex.append(ByteBufUtil.hexDump(b));
                b.release();
            }
            System.out.println(hex);
        }
        ch.finishAndReleaseAll();
    }
}
