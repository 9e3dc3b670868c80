// Peers for harrec's HTTP/2 end-to-end tests, written with Go's net/http (Debian golang-go, no
// modules from outside the standard library).
//
//	gopeer client -proxy URL -ca FILE [-n N] [-post FILE] URL...
//	    Requests each URL N times at once through the proxy (CONNECT), as Go apps do by default
//	    (HTTP/2 when offered). Prints one JSON line per response: url, proto, status, len, sha256.
//	gopeer server -cert FILE -key FILE
//	    An HTTP/2-only TLS server: its ALPN accepts only h2, so a client offering only http/1.1
//	    gets the no_application_protocol alert (Go's crypto/tls since 1.17). Prints "PORT n".
//	    /bytes?n=N&seed=S  N bytes (byte i is (i*31 + S) mod 251); /echo the request body back,
//	    with each request trailer returned as an x-echo-<name> trailer.
package main

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gopeer client|server ...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "client":
		client(os.Args[2:])
	case "server":
		server(os.Args[2:])
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
		os.Exit(2)
	}
}

func client(args []string) {
	flags := flag.NewFlagSet("client", flag.ExitOnError)
	proxy := flags.String("proxy", "", "proxy URL")
	caFile := flags.String("ca", "", "trusted CA (PEM)")
	count := flags.Int("n", 1, "requests per URL, at once")
	postFile := flags.String("post", "", "POST this file's bytes instead of GET")
	flags.Parse(args)
	pool := x509.NewCertPool()
	pem, err := os.ReadFile(*caFile)
	if err != nil || !pool.AppendCertsFromPEM(pem) {
		fmt.Fprintln(os.Stderr, "cannot load CA", *caFile, err)
		os.Exit(1)
	}
	proxyURL, err := url.Parse(*proxy)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad proxy", err)
		os.Exit(1)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true, MaxConnsPerHost: 1}
	if *proxy != "" { // no proxy: straight to the server, for a direct answer to compare with
		transport.Proxy = http.ProxyURL(proxyURL)
	}
	httpClient := &http.Client{Transport: transport}
	var body []byte
	if *postFile != "" {
		if body, err = os.ReadFile(*postFile); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	var lock sync.Mutex
	var group sync.WaitGroup
	encoder := json.NewEncoder(os.Stdout)
	failed := false
	for _, target := range flags.Args() {
		for i := 0; i < *count; i++ {
			group.Add(1)
			go func(target string) {
				defer group.Done()
				var response *http.Response
				var err error
				if body != nil {
					response, err = httpClient.Post(target, "application/octet-stream", strings.NewReader(string(body)))
				} else {
					response, err = httpClient.Get(target)
				}
				lock.Lock()
				defer lock.Unlock()
				if err != nil {
					fmt.Fprintln(os.Stderr, "request failed:", err)
					failed = true
					return
				}
				data, err := io.ReadAll(response.Body)
				response.Body.Close()
				if err != nil {
					fmt.Fprintln(os.Stderr, "body failed:", err)
					failed = true
					return
				}
				sum := sha256.Sum256(data)
				encoder.Encode(map[string]any{"url": target, "proto": response.Proto, "status": response.StatusCode,
					"len": len(data), "sha256": hex.EncodeToString(sum[:])})
			}(target)
		}
	}
	group.Wait()
	if failed {
		os.Exit(1)
	}
}

func pattern(n, seed int) []byte {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte((i*31 + seed) % 251)
	}
	return data
}

func server(args []string) {
	flags := flag.NewFlagSet("server", flag.ExitOnError)
	certFile := flags.String("cert", "", "certificate (PEM)")
	keyFile := flags.String("key", "", "key (PEM)")
	flags.Parse(args)
	mux := http.NewServeMux()
	mux.HandleFunc("/bytes", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		seed, _ := strconv.Atoi(r.URL.Query().Get("seed"))
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(pattern(n, seed))
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		for name := range r.Trailer {
			w.Header().Add("Trailer", "X-Echo-"+name)
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(data)
		for name, values := range r.Trailer {
			w.Header().Set("X-Echo-"+name, strings.Join(values, ","))
		}
	})
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h2only := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}}
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert},
		// net/http adds http/1.1 to the server's list; each handshake uses h2 alone.
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return h2only, nil }}}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("PORT %d\n", listener.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	if err := srv.ServeTLS(listener, "", ""); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
