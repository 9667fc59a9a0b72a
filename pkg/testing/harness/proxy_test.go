package harness

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestWatchStallProxy: through the TLS proxy (HTTP/2, its certificate trusted by the
// kubeconfig it writes) a watch streams while the stall is off; on, the watch in flight
// goes silent, a new watch gets its headers and then nothing, and a GET still answers;
// off again, the held watch streams on. The upstream is a stand-in apiserver that sends a
// watch event every 20 ms.
func TestWatchStallProxy(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !isWatch(r) {
			fmt.Fprintln(w, `{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"1"}}`)
			return
		}
		for i := 0; ; i++ {
			fmt.Fprintf(w, `{"type":"MODIFIED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"%d"}}}`+"\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	// Closed last (cleanups run last first): after the watches and the proxy have ended.
	t.Cleanup(func() {
		upstream.CloseClientConnections()
		upstream.Close()
	})
	stall := &WatchStall{}
	kubeconfig := proxyTo(t, &rest.Config{Host: upstream.URL}, ProxyOptions{TLS: true, Stall: stall})
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: rt}
	const path = "/api/v1/namespaces/x/configmaps"

	first, lines := watch(t, client, cfg.Host+path+"?watch=true")
	if first.ProtoMajor != 2 {
		t.Errorf("the proxy answered over %s, want HTTP/2", first.Proto)
	}
	if !delivers(lines, time.Second) {
		t.Fatal("a watch delivered nothing with the stall off")
	}
	stall.Set(true)
	drain(lines, 100*time.Millisecond) // what was read before the switch
	if delivers(lines, 300*time.Millisecond) {
		t.Error("the watch in flight still delivers with the stall on")
	}
	_, silent := watch(t, client, cfg.Host+path+"?watch=1") // answered: its headers came
	if delivers(silent, 300*time.Millisecond) {
		t.Error("a new watch delivers with the stall on")
	}
	resp, err := client.Get(cfg.Host + path + "/a")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a GET with the stall on: %v %v", resp, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(body) == 0 {
		t.Error("a GET with the stall on answered an empty body")
	}
	stall.Set(false)
	if !delivers(lines, time.Second) || !delivers(silent, time.Second) {
		t.Error("the watches did not stream on once the stall was off")
	}
}

// watch starts a watch at url and returns its response (its headers came) and its lines.
func watch(t *testing.T, client *http.Client, url string) (*http.Response, <-chan string) {
	t.Helper()
	type answer struct {
		resp *http.Response
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := client.Get(url)
		answered <- answer{resp, err}
	}()
	var a answer
	select {
	case a = <-answered:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no response headers within 5 s", url)
	}
	if a.err != nil || a.resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %v %v", url, a.resp, a.err)
	}
	t.Cleanup(func() { a.resp.Body.Close() })
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(a.resp.Body)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody reads them any more
			}
		}
	}()
	return a.resp, lines
}

// delivers says whether a line comes within d.
func delivers(lines <-chan string, d time.Duration) bool {
	select {
	case <-lines:
		return true
	case <-time.After(d):
		return false
	}
}

// drain takes what lines holds and what comes within d.
func drain(lines <-chan string, d time.Duration) {
	end := time.After(d)
	for {
		select {
		case <-lines:
		case <-end:
			return
		}
	}
}
