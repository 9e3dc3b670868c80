// Command loadgen drives HTTP/1.1 or HTTP/2 load through an HTTP forward proxy, for harrec's
// benchmarks (wrk and h2load cannot send https through a proxy). Each of -c connections is its own
// socket: to the proxy (or, without -proxy, to the origin); https URLs go through CONNECT, then TLS
// trusting -cacert. HTTP/1.1 connections send one request at a time (keep-alive, or a new
// connection per request with -close); HTTP/2 connections (-h2) carry -streams concurrent streams.
// It runs for -duration after -warmup, or until -requests answers, and prints one JSON object:
// requests/s, latency percentiles, errors, status codes and the protocols negotiated.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
)

type options struct {
	target, proxy       *url.URL
	conns, streams      int
	h2, close, insecure bool
	tlsConf             *tls.Config
	requests            int64
	timeout             time.Duration
}

type stats struct {
	mu        sync.Mutex
	lat       []time.Duration
	ok, errs  int64
	status    map[int]int64
	protos    map[string]int64
	bytes     int64
	lastError string
	connects  int64
}

func (s *stats) record(d time.Duration, code int, proto string, n int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errs++
		s.lastError = err.Error()
		return
	}
	s.status[code]++
	s.protos[proto]++
	s.bytes += n
	if code >= 200 && code < 400 {
		s.ok++
		s.lat = append(s.lat, d)
	} else {
		s.errs++
		s.lastError = fmt.Sprintf("status %d", code)
	}
}

// dial opens one connection to the origin: through the proxy with CONNECT for https, then TLS.
func dial(o *options, alpn []string) (net.Conn, string, error) {
	hostport := o.target.Host
	if o.target.Port() == "" {
		hostport = net.JoinHostPort(o.target.Hostname(), map[bool]string{true: "443", false: "80"}[o.target.Scheme == "https"])
	}
	addr := hostport
	if o.proxy != nil {
		addr = o.proxy.Host
	}
	c, err := net.DialTimeout("tcp", addr, o.timeout)
	if err != nil {
		return nil, "", err
	}
	if o.target.Scheme != "https" {
		return c, "http/1.1", nil
	}
	if o.proxy != nil {
		c.SetDeadline(time.Now().Add(o.timeout))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostport, hostport)
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err == nil && res.StatusCode != 200 {
			err = fmt.Errorf("CONNECT: %s", res.Status)
		}
		if err == nil && br.Buffered() > 0 {
			err = errors.New("CONNECT: proxy sent data before TLS")
		}
		if err != nil {
			c.Close()
			return nil, "", err
		}
		c.SetDeadline(time.Time{})
	}
	conf := o.tlsConf.Clone()
	conf.ServerName = o.target.Hostname()
	conf.NextProtos = alpn
	tc := tls.Client(c, conf)
	tc.SetDeadline(time.Now().Add(o.timeout))
	if err := tc.Handshake(); err != nil {
		c.Close()
		return nil, "", err
	}
	tc.SetDeadline(time.Time{})
	proto := tc.ConnectionState().NegotiatedProtocol
	if proto == "" {
		proto = "http/1.1"
	}
	return tc, proto, nil
}

// take reserves one request of -requests; false once the count (or the deadline) is reached.
func take(ctx context.Context, left *int64) bool {
	if ctx.Err() != nil {
		return false
	}
	return left == nil || atomic.AddInt64(left, -1) >= 0
}

// h1 runs one HTTP/1.1 connection: a request at a time, reconnecting when the connection ends.
func h1(ctx context.Context, o *options, st *stats, left *int64) {
	var c net.Conn
	var br *bufio.Reader
	for take(ctx, left) {
		start := time.Now()
		if c == nil {
			var err error
			if c, _, err = dial(o, []string{"http/1.1"}); err != nil {
				st.record(0, 0, "", 0, err)
				time.Sleep(10 * time.Millisecond)
				continue
			}
			atomic.AddInt64(&st.connects, 1)
			br = bufio.NewReaderSize(c, 64<<10)
		}
		req, _ := http.NewRequest(http.MethodGet, o.target.String(), nil)
		req.Close = o.close
		c.SetDeadline(time.Now().Add(o.timeout))
		var err error
		if o.proxy != nil && o.target.Scheme == "http" {
			err = req.WriteProxy(c)
		} else {
			err = req.Write(c)
		}
		var res *http.Response
		var n int64
		if err == nil {
			if res, err = http.ReadResponse(br, req); err == nil {
				n, err = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}
		if err != nil {
			st.record(0, 0, "", 0, err)
			c.Close()
			c = nil
			continue
		}
		st.record(time.Since(start), res.StatusCode, "http/1.1", n, nil)
		if res.Close || o.close {
			c.Close()
			c = nil
		}
	}
	if c != nil {
		c.Close()
	}
}

// h2conn runs one HTTP/2 connection with o.streams concurrent streams. A proxy that does not
// negotiate h2 is an error, counted and reported, not silently downgraded.
func h2conn(ctx context.Context, o *options, st *stats, left *int64) {
	for ctx.Err() == nil && (left == nil || atomic.LoadInt64(left) > 0) {
		c, proto, err := dial(o, []string{"h2"})
		if err == nil && proto != "h2" {
			// The proxy does not speak h2 to clients: an error, not a silent HTTP/1.1 run.
			c.Close()
			st.record(0, 0, "", 0, fmt.Errorf("ALPN negotiated %q, not h2", proto))
			return
		}
		if err != nil {
			st.record(0, 0, "", 0, err)
			if left != nil {
				atomic.AddInt64(left, -1)
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		atomic.AddInt64(&st.connects, 1)
		cc, err := (&http2.Transport{DisableCompression: true}).NewClientConn(c)
		if err != nil {
			st.record(0, 0, "", 0, err)
			c.Close()
			continue
		}
		var wg sync.WaitGroup
		var broken int32
		for i := 0; i < o.streams; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for atomic.LoadInt32(&broken) == 0 && take(ctx, left) {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, o.target.String(), nil)
					start := time.Now()
					res, err := cc.RoundTrip(req)
					var n int64
					if err == nil {
						n, err = io.Copy(io.Discard, res.Body)
						res.Body.Close()
					}
					if err != nil {
						if ctx.Err() == nil {
							st.record(0, 0, "", 0, err)
						}
						if !cc.CanTakeNewRequest() {
							atomic.StoreInt32(&broken, 1)
						}
						continue
					}
					st.record(time.Since(start), res.StatusCode, "h2", n, nil)
				}
			}()
		}
		wg.Wait()
		cc.Close()
	}
}

func run(o *options, d time.Duration, st *stats, left *int64) time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	if d > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), d)
	}
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < o.conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if o.h2 {
				h2conn(ctx, o, st, left)
			} else {
				h1(ctx, o, st, left)
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

func newStats() *stats { return &stats{status: map[int]int64{}, protos: map[string]int64{}} }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func main() {
	target := flag.String("url", "", "target URL (http:// or https://)")
	proxy := flag.String("proxy", "", "HTTP proxy URL, e.g. http://127.0.0.1:8080 (none: straight to the origin)")
	o := &options{}
	flag.IntVar(&o.conns, "c", 16, "connections")
	flag.IntVar(&o.streams, "streams", 16, "concurrent streams per connection (-h2)")
	flag.BoolVar(&o.h2, "h2", false, "HTTP/2 (https only; ALPN must give h2)")
	flag.BoolVar(&o.close, "close", false, "HTTP/1.1: a new connection per request (Connection: close)")
	flag.BoolVar(&o.insecure, "insecure", false, "do not verify the server certificate")
	cafile := flag.String("cacert", "", "trust this CA (PEM) for https")
	duration := flag.Duration("duration", 10*time.Second, "measured time (ignored with -requests)")
	warmup := flag.Duration("warmup", 0, "discarded warm-up before the measurement")
	flag.Int64Var(&o.requests, "requests", 0, "stop after this many requests instead of -duration")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Second, "per request / connect timeout")
	flag.Parse()
	fail := func(f string, a ...interface{}) { fmt.Fprintf(os.Stderr, "loadgen: "+f+"\n", a...); os.Exit(2) }
	var err error
	if o.target, err = url.Parse(*target); err != nil || (o.target.Scheme != "http" && o.target.Scheme != "https") {
		fail("-url: need an http:// or https:// URL")
	}
	if *proxy != "" {
		if o.proxy, err = url.Parse(*proxy); err != nil || o.proxy.Host == "" {
			fail("-proxy: bad URL %q", *proxy)
		}
	}
	if o.h2 && o.target.Scheme != "https" {
		fail("-h2 needs an https URL")
	}
	if o.conns < 1 || o.streams < 1 {
		fail("-c and -streams must be >= 1")
	}
	o.tlsConf = &tls.Config{InsecureSkipVerify: o.insecure, ClientSessionCache: tls.NewLRUClientSessionCache(256)}
	if *cafile != "" {
		pemBytes, err := os.ReadFile(*cafile)
		if err != nil {
			fail("%v", err)
		}
		o.tlsConf.RootCAs = x509.NewCertPool()
		if !o.tlsConf.RootCAs.AppendCertsFromPEM(pemBytes) {
			fail("%s: no certificate", *cafile)
		}
	}
	if *warmup > 0 {
		run(o, *warmup, newStats(), nil)
	}
	st := newStats()
	var left *int64
	d := *duration
	if o.requests > 0 {
		n := o.requests
		left, d = &n, 0
	}
	elapsed := run(o, d, st, left)
	sort.Slice(st.lat, func(i, j int) bool { return st.lat[i] < st.lat[j] })
	pct := func(p float64) float64 {
		if len(st.lat) == 0 {
			return 0
		}
		i := int(p/100*float64(len(st.lat))+0.5) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(st.lat) {
			i = len(st.lat) - 1
		}
		return ms(st.lat[i])
	}
	status := map[string]int64{}
	for k, v := range st.status {
		status[fmt.Sprint(k)] = v
	}
	out := map[string]interface{}{
		"requests": st.ok + st.errs, "ok": st.ok, "errors": st.errs, "status": status,
		"protocols": st.protos, "connects": st.connects, "bytes": st.bytes,
		"seconds": elapsed.Seconds(), "rps": float64(st.ok) / elapsed.Seconds(),
		"p50_ms": pct(50), "p90_ms": pct(90), "p99_ms": pct(99), "max_ms": pct(100),
		"connections": o.conns, "h2": o.h2, "streams": o.streams, "last_error": st.lastError,
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
