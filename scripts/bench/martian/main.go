// Command martian is harrec's benchmark peer: Google's Martian proxy as a recording forward proxy.
// It listens on -addr, intercepts CONNECT tunnels with the CA in -ca-cert/-ca-key (created there
// when missing), records every exchange with Martian's HAR logger and writes the HAR to -har on
// SIGINT or SIGTERM, then exits: the same job as `harrec record`. CONNECT requests themselves are
// not recorded (harrec does not record them either). Martian relays HTTP/2 frames without its
// modifiers: h2 is offered to clients only with -h2, and those exchanges are relayed, not recorded.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/martian/v3"
	"github.com/google/martian/v3/h2"
	"github.com/google/martian/v3/har"
	"github.com/google/martian/v3/mitm"
)

// skipConnect records everything but the CONNECT requests that open tunnels.
type skipConnect struct{ l *har.Logger }

func (s skipConnect) ModifyRequest(req *http.Request) error {
	if req.Method == http.MethodConnect {
		return nil
	}
	return s.l.ModifyRequest(req)
}

func (s skipConnect) ModifyResponse(res *http.Response) error {
	if res.Request != nil && res.Request.Method == http.MethodConnect {
		return nil
	}
	return s.l.ModifyResponse(res)
}

func loadOrCreateCA(certPath, keyPath string) (*x509.Certificate, interface{}) {
	if pair, err := tls.LoadX509KeyPair(certPath, keyPath); err == nil {
		cert, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			log.Fatalf("martian: %s: %v", certPath, err)
		}
		return cert, pair.PrivateKey
	}
	cert, key, err := mitm.NewAuthority("harrec-bench martian CA", "harrec-bench", 365*24*time.Hour)
	if err != nil {
		log.Fatalf("martian: creating CA: %v", err)
	}
	keyDER := x509.MarshalPKCS1PrivateKey(key)
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o644); err != nil {
		log.Fatal(err)
	}
	return cert, key
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	harPath := flag.String("har", "martian.har", "HAR written on SIGINT/SIGTERM")
	caCert := flag.String("ca-cert", "martian-ca.pem", "CA certificate (PEM; created when missing)")
	caKey := flag.String("ca-key", "martian-ca-key.pem", "CA private key (PEM; created when missing)")
	upstreamCA := flag.String("upstream-ca", "", "verify origins against this CA (PEM) instead of the system roots")
	insecure := flag.Bool("insecure", false, "do not verify origins' certificates")
	relayH2 := flag.Bool("h2", false, "offer h2 to clients and relay it with Martian's h2 frame relay (not recorded)")
	flag.Parse()

	ca, key := loadOrCreateCA(*caCert, *caKey)
	mc, err := mitm.NewConfig(ca, key)
	if err != nil {
		log.Fatalf("martian: %v", err)
	}
	mc.SkipTLSVerify(*insecure)
	upstreamTLS := &tls.Config{InsecureSkipVerify: *insecure}
	if *upstreamCA != "" {
		pemBytes, err := os.ReadFile(*upstreamCA)
		if err != nil {
			log.Fatal(err)
		}
		upstreamTLS.RootCAs = x509.NewCertPool()
		upstreamTLS.RootCAs.AppendCertsFromPEM(pemBytes)
	}

	if *relayH2 {
		mc.SetH2Config(&h2.Config{AllowedHostsFilter: func(string) bool { return true }, RootCAs: upstreamTLS.RootCAs})
	}
	logger := har.NewLogger() // bodies and post data recorded, as harrec does
	p := martian.NewProxy()
	// Keep-alive to the origin for every client connection (Go's default keeps 2 idle per host),
	// and pass Content-Encoding through untouched as the other proxies do.
	p.SetRoundTripper(&http.Transport{TLSClientConfig: upstreamTLS, MaxIdleConns: 1024,
		MaxIdleConnsPerHost: 1024, DisableCompression: true, TLSHandshakeTimeout: 10 * time.Second})
	p.SetMITM(mc)
	p.SetRequestModifier(skipConnect{logger})
	p.SetResponseModifier(skipConnect{logger})

	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("martian: %v", err)
	}
	log.Printf("martian: listening on %s, HAR to %s", l.Addr(), *harPath)
	go p.Serve(l)

	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	<-sigc
	l.Close()
	data, err := json.Marshal(logger.Export())
	if err == nil {
		err = os.WriteFile(*harPath, data, 0o644)
	}
	if err != nil {
		log.Fatalf("martian: writing %s: %v", *harPath, err)
	}
	log.Printf("martian: wrote %s (%d bytes)", *harPath, len(data))
}
