package harness

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// RequestLog records the requests that passed through a recording proxy.
type RequestLog struct {
	mu   sync.Mutex
	reqs []string
	// at is when each request arrived.
	at []time.Time
}

func (l *RequestLog) Add(r string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, r)
	l.at = append(l.at, time.Now())
}

// LastAt is when the last request arrived.
func (l *RequestLog) LastAt() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.at) == 0 {
		return time.Time{}
	}
	return l.at[len(l.at)-1]
}

// Take returns the requests so far and forgets them.
func (l *RequestLog) Take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.reqs
	l.reqs, l.at = nil, nil
	return out
}

// Writes are the requests that could change the cluster (anything but GET, HEAD, OPTIONS;
// a server-side dry run is a write request too, but tests never send one through here).
func Writes(reqs []string) []string {
	var out []string
	for _, r := range reqs {
		method, _, _ := strings.Cut(r, " ")
		if method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions {
			out = append(out, r)
		}
	}
	return out
}

// InstallWrites are the writes of reqs other than the cluster lock's own Lease requests
// (creating, taking and releasing it; istioctl writes no other Lease): what a refused run
// must not send.
func InstallWrites(reqs []string) []string {
	var out []string
	for _, w := range Writes(reqs) {
		if !strings.Contains(w, " /apis/coordination.k8s.io/v1/namespaces/kube-system/leases") {
			out = append(out, w)
		}
	}
	return out
}

// RecordingProxy serves the cluster's API on a plain loopback address (Proxy), recording
// every request as "METHOD path?query" (with " [metadata]" after a request for metadata
// only). It returns a kubeconfig for istioctl that goes through it: what istioctl sent is
// then known exactly, not inferred from what changed.
func RecordingProxy(t testing.TB, c *cluster.Cluster) (string, *RequestLog) {
	t.Helper()
	log := &RequestLog{}
	// Recorded as it arrives, not when it is answered: a watch is answered when it ends.
	kubeconfig := Proxy(t, c, func(r *http.Request) {
		entry := r.Method + " " + r.URL.RequestURI()
		if strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata") {
			entry += " [metadata]"
		}
		log.Add(entry)
	}, nil)
	return kubeconfig, log
}

// Proxy serves the cluster's API on a plain loopback address, forwarding with the admin
// credentials, calling arrived (when not nil) with each request as it arrives and answered
// (when not nil) with it and its status once it was answered. It returns a kubeconfig that
// goes through it.
func Proxy(t testing.TB, c *cluster.Cluster, arrived func(*http.Request), answered func(r *http.Request, status int)) string {
	t.Helper()
	return ProxyWith(t, c, ProxyOptions{Arrived: arrived, Answered: answered})
}

// ProxyOptions is what a proxy does beside forwarding.
type ProxyOptions struct {
	// Arrived is called with each request as it arrives, Answered with it and its status
	// once it was answered.
	Arrived  func(*http.Request)
	Answered func(r *http.Request, status int)
	// TLS serves HTTPS and HTTP/2 (as an apiserver is reached: watches share a connection
	// with every other request) with a certificate of its own that the kubeconfig trusts.
	// The bed's CA key is not the tests' (pkg/testing/cluster keeps it to itself).
	TLS bool
	// Stall, when set, is the switch that holds watch streams silent (WatchStall).
	Stall *WatchStall
}

// StalledWatchesKubeconfig is a kubeconfig through a TLS proxy whose watch streams go
// silent while the switch it returns is on, every other request passing: a load balancer
// that buffers or idles out watches while GETs still answer.
func StalledWatchesKubeconfig(t testing.TB, c *cluster.Cluster) (string, *WatchStall) {
	t.Helper()
	s := &WatchStall{}
	return ProxyWith(t, c, ProxyOptions{TLS: true, Stall: s}), s
}

// ProxyWith serves the cluster's API on a loopback address as o says, forwarding with the
// admin credentials, and returns a kubeconfig that goes through it.
func ProxyWith(t testing.TB, c *cluster.Cluster, o ProxyOptions) string {
	t.Helper()
	return proxyTo(t, c.Config, o)
}

func proxyTo(t testing.TB, upstream *rest.Config, o ProxyOptions) string {
	t.Helper()
	rt, err := rest.TransportFor(upstream)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(upstream.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = rt
	if o.Stall != nil {
		proxy.ModifyResponse = func(resp *http.Response) error {
			if isWatch(resp.Request) {
				resp.Body = &stalledBody{ReadCloser: resp.Body, ctx: resp.Request.Context(), s: o.Stall}
			}
			return nil
		}
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.Arrived != nil {
			o.Arrived(r)
		}
		// A watch's headers go out at once, as the apiserver sends them: a stalled watch is
		// one that was answered and then says nothing.
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK, flushHeader: o.Stall != nil && isWatch(r)}
		proxy.ServeHTTP(sw, r)
		if o.Answered != nil {
			o.Answered(r, sw.status)
		}
	}))
	cluster := fmt.Sprintf("{server: %q}", "http://"+srv.Listener.Addr().String())
	if o.TLS {
		srv.EnableHTTP2 = true
		srv.StartTLS()
		ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		cluster = fmt.Sprintf("{server: %q, certificate-authority-data: %s}", srv.URL, base64.StdEncoding.EncodeToString(ca))
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "proxy-kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: %s}]
users: [{name: proxy, user: {}}]
contexts: [{name: proxy, context: {cluster: proxy, user: proxy}}]
current-context: proxy
`, cluster)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// isWatch says r asks for a watch stream.
func isWatch(r *http.Request) bool {
	v := r.URL.Query().Get("watch")
	return v == "true" || v == "1"
}

// WatchStall is a proxy's switch for its watch streams: while it is on, every watch
// response, those in flight and those yet to come, passes nothing after its headers, held
// open; when it goes off, what was held flows on.
type WatchStall struct {
	mu      sync.Mutex
	on      bool
	changed chan struct{}
}

// Set turns the stall on or off.
func (s *WatchStall) Set(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = on
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// wait returns once the stall is off, or with ctx's error when ctx ends first.
func (s *WatchStall) wait(ctx context.Context) error {
	for {
		s.mu.Lock()
		if !s.on {
			s.mu.Unlock()
			return nil
		}
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// stalledBody is a watch's body behind a WatchStall: what it reads is held while the
// stall is on.
type stalledBody struct {
	io.ReadCloser
	ctx context.Context
	s   *WatchStall
}

func (b *stalledBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if werr := b.s.wait(b.ctx); werr != nil {
		return 0, werr
	}
	return n, err
}

// statusWriter keeps the status a handler answered with; it passes flushes on (watches),
// and with flushHeader sends the headers at once.
type statusWriter struct {
	http.ResponseWriter
	status      int
	flushHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
	if w.flushHeader {
		w.Flush()
	}
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// DryRuns are the server-side dry-run requests among reqs.
func DryRuns(reqs []string) []string {
	var out []string
	for _, r := range reqs {
		if strings.Contains(r, "dryRun=") {
			out = append(out, r)
		}
	}
	return out
}

// RepeatedMetadataLists are the metadata lists among reqs sent more than once.
func RepeatedMetadataLists(reqs []string) []string {
	n := map[string]int{}
	for _, r := range reqs {
		if strings.HasPrefix(r, "GET ") && strings.HasSuffix(r, " [metadata]") {
			n[r]++
		}
	}
	var out []string
	for r, k := range n {
		if k > 1 {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}
