// go-spdy: an independent SPDY/3.1 peer for spdylab's interop tests, built on
// the SPDY framer of github.com/moby/spdystream (derived from Go's own
// go.net/spdy). Flow control and stream handling are written here, from the
// spec, not from spdylab's code.
//
//	go-spdy client ADDR HOST OUTDIR PATH...  fetch each path (one session, default
//	                                         64 KiB windows) into OUTDIR/<n>, print
//	                                         "path status len sha256"
//	go-spdy server ADDR DOCROOT CERT KEY   serve DOCROOT/<host>/<path> until killed
package main

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/spdystream/spdy"
)

const window = 65536

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: go-spdy client ADDR HOST OUTDIR PATH... | server ADDR DOCROOT CERT KEY")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "client":
		err = client(os.Args[2], os.Args[3], os.Args[4], os.Args[5:])
	case "server":
		err = server(os.Args[2], os.Args[3], os.Args[4], os.Args[5])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-spdy:", err)
		os.Exit(1)
	}
}

type result struct {
	path   string
	status string
	body   []byte
	done   bool
}

func client(addr, host, outdir string, paths []string) error {
	conn, err := tls.Dial("tcp", addr, &tls.Config{ServerName: host, InsecureSkipVerify: true, NextProtos: []string{"spdy/3.1"}})
	if err != nil {
		return err
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "spdy/3.1" {
		return fmt.Errorf("ALPN negotiated %q, not spdy/3.1", p)
	}
	f, err := spdy.NewFramer(conn, conn)
	if err != nil {
		return err
	}
	streams := map[spdy.StreamId]*result{}
	order := []spdy.StreamId{}
	for i, p := range paths {
		id := spdy.StreamId(2*i + 1)
		h := http.Header{}
		h.Set(":method", "GET")
		h.Set(":path", p)
		h.Set(":version", "HTTP/1.1")
		h.Set(":host", host)
		h.Set(":scheme", "https")
		if err := f.WriteFrame(&spdy.SynStreamFrame{StreamId: id, Priority: 3, Headers: h, CFHeader: spdy.ControlFrameHeader{Flags: spdy.ControlFlagFin}}); err != nil {
			return err
		}
		streams[id] = &result{path: p}
		order = append(order, id)
	}
	left := len(paths)
	// Bytes received since the last WINDOW_UPDATE, per stream and for the session.
	unacked := map[spdy.StreamId]uint32{}
	session := uint32(0)
	for left > 0 {
		frame, err := f.ReadFrame()
		if err != nil {
			return err
		}
		switch fr := frame.(type) {
		case *spdy.SynReplyFrame:
			if s := streams[fr.StreamId]; s != nil {
				s.status = fr.Headers.Get(":status")
				if fr.CFHeader.Flags&spdy.ControlFlagFin != 0 {
					s.done = true
					left--
				}
			}
		case *spdy.DataFrame:
			s := streams[fr.StreamId]
			if s == nil {
				return fmt.Errorf("DATA on unknown stream %d", fr.StreamId)
			}
			s.body = append(s.body, fr.Data...)
			n := uint32(len(fr.Data))
			unacked[fr.StreamId] += n
			session += n
			if fr.Flags&spdy.DataFlagFin != 0 {
				s.done = true
				left--
			} else if unacked[fr.StreamId] >= window/2 {
				if err := f.WriteFrame(&spdy.WindowUpdateFrame{StreamId: fr.StreamId, DeltaWindowSize: unacked[fr.StreamId]}); err != nil {
					return err
				}
				unacked[fr.StreamId] = 0
			}
			if session >= window/2 {
				if err := f.WriteFrame(&spdy.WindowUpdateFrame{StreamId: 0, DeltaWindowSize: session}); err != nil {
					return err
				}
				session = 0
			}
		case *spdy.RstStreamFrame:
			return fmt.Errorf("stream %d reset: %d", fr.StreamId, fr.Status)
		case *spdy.GoAwayFrame:
			return fmt.Errorf("GOAWAY %d", fr.Status)
		case *spdy.PingFrame:
			if err := f.WriteFrame(&spdy.PingFrame{Id: fr.Id}); err != nil {
				return err
			}
		}
	}
	for i, id := range order {
		s := streams[id]
		if err := os.WriteFile(filepath.Join(outdir, fmt.Sprint(i)), s.body, 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256(s.body)
		fmt.Printf("%s %s %d %s\n", s.path, strings.SplitN(s.status, " ", 2)[0], len(s.body), hex.EncodeToString(sum[:]))
	}
	return nil
}

type pending struct {
	id     spdy.StreamId
	body   []byte
	window int64
}

func server(addr, docroot, cert, key string) error {
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return err
	}
	l, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: []string{"spdy/3.1"}})
	if err != nil {
		return err
	}
	fmt.Println("listening", l.Addr())
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go serve(c, docroot)
	}
}

// serve answers SYN_STREAMs from the docroot, sending DATA in 16 KiB frames
// within the stream and session windows (64 KiB each until updated).
func serve(c net.Conn, docroot string) {
	defer c.Close()
	f, err := spdy.NewFramer(c, c)
	if err != nil {
		return
	}
	initial := int64(window)
	session := int64(window)
	var queue []*pending
	for {
		frame, err := f.ReadFrame()
		if err != nil {
			if err != io.EOF {
				fmt.Fprintln(os.Stderr, "go-spdy server:", err)
			}
			return
		}
		switch fr := frame.(type) {
		case *spdy.SynStreamFrame:
			host, path := fr.Headers.Get(":host"), fr.Headers.Get(":path")
			if i := strings.LastIndex(host, ":"); i > 0 {
				host = host[:i]
			}
			if strings.HasSuffix(path, "/") {
				path += "index.html"
			}
			body, err := os.ReadFile(filepath.Join(docroot, host, filepath.Clean("/"+path)))
			h := http.Header{}
			h.Set(":version", "HTTP/1.1")
			if err != nil {
				h.Set(":status", "404 Not Found")
				f.WriteFrame(&spdy.SynReplyFrame{StreamId: fr.StreamId, Headers: h, CFHeader: spdy.ControlFrameHeader{Flags: spdy.ControlFlagFin}})
				continue
			}
			h.Set(":status", "200 OK")
			h.Set("content-length", fmt.Sprint(len(body)))
			ctype := mime.TypeByExtension(filepath.Ext(path))
			if ctype == "" {
				ctype = http.DetectContentType(body)
			}
			h.Set("content-type", ctype)
			if len(body) == 0 {
				f.WriteFrame(&spdy.SynReplyFrame{StreamId: fr.StreamId, Headers: h, CFHeader: spdy.ControlFrameHeader{Flags: spdy.ControlFlagFin}})
				continue
			}
			f.WriteFrame(&spdy.SynReplyFrame{StreamId: fr.StreamId, Headers: h})
			queue = append(queue, &pending{id: fr.StreamId, body: body, window: initial})
		case *spdy.WindowUpdateFrame:
			if fr.StreamId == 0 {
				session += int64(fr.DeltaWindowSize)
			}
			for _, p := range queue {
				if p.id == fr.StreamId {
					p.window += int64(fr.DeltaWindowSize)
				}
			}
		case *spdy.SettingsFrame:
			for _, s := range fr.FlagIdValues {
				if s.Id == spdy.SettingsInitialWindowSize {
					delta := int64(s.Value) - initial
					initial = int64(s.Value)
					for _, p := range queue {
						p.window += delta
					}
				}
			}
		case *spdy.PingFrame:
			f.WriteFrame(&spdy.PingFrame{Id: fr.Id})
		case *spdy.GoAwayFrame:
			return
		}
		// Send what the windows allow, oldest stream first.
		for len(queue) > 0 && session > 0 {
			sent := false
			for i := 0; i < len(queue); i++ {
				p := queue[i]
				n := int64(len(p.body))
				if n > 16384 {
					n = 16384
				}
				if n > p.window {
					n = p.window
				}
				if n > session {
					n = session
				}
				if n <= 0 {
					continue
				}
				fin := n == int64(len(p.body))
				flags := spdy.DataFlags(0)
				if fin {
					flags = spdy.DataFlagFin
				}
				if err := f.WriteFrame(&spdy.DataFrame{StreamId: p.id, Flags: flags, Data: p.body[:n]}); err != nil {
					return
				}
				p.body = p.body[n:]
				p.window -= n
				session -= n
				sent = true
				if fin {
					queue = append(queue[:i], queue[i+1:]...)
					i--
				}
			}
			if !sent {
				break
			}
		}
	}
}
