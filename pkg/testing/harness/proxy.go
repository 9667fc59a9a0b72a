package harness

import (
	"fmt"
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
	rt, err := rest.TransportFor(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(c.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = rt
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrived != nil {
			arrived(r)
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		proxy.ServeHTTP(sw, r)
		if answered != nil {
			answered(r, sw.status)
		}
	}))
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "proxy-kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: %q}}]
users: [{name: proxy, user: {}}]
contexts: [{name: proxy, context: {cluster: proxy, user: proxy}}]
current-context: proxy
`, srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// statusWriter keeps the status a handler answered with; it passes flushes on (watches).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
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
