package kube

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestWriteGuard: which requests of a guarded client reach the server, inside a run (its
// permit in the context, its check passing or not) and outside one.
func TestWriteGuard(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path)
		mu.Unlock()
	}))
	defer srv.Close()
	guard := &writeGuard{}
	guard.required.Store(true)
	client := &http.Client{Transport: guarded{next: http.DefaultTransport, guard: guard}}

	lost := errors.New("lost the cluster lock")
	inRun := WithWritePermit(context.Background(), WritePermit{})
	lostRun := WithWritePermit(context.Background(), WritePermit{Check: func() error { return lost }})
	for _, tc := range []struct {
		name         string
		ctx          context.Context
		method, path string
		body         string
		sent         bool
	}{
		{"a read outside a run", context.Background(), "GET", "/api/v1/namespaces/x/secrets/y", "", true},
		{"a write outside a run", context.Background(), "PATCH", "/api/v1/namespaces/x/configmaps/y", "{}", false},
		{"a delete outside a run", context.Background(), "DELETE", "/api/v1/namespaces/x/configmaps/y", `{"kind":"DeleteOptions"}`, false},
		{"a server-side dry run outside a run", context.Background(), "PATCH", "/api/v1/namespaces/x/configmaps/y?dryRun=All", "{}", true},
		{"a dry-run delete outside a run", context.Background(), "DELETE", "/api/v1/namespaces/x/configmaps/y", `{"kind":"DeleteOptions","dryRun":["All"]}`, true},
		{"an access review outside a run", context.Background(), "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "{}", true},
		{"a write in a run", inRun, "POST", "/api/v1/namespaces/x/secrets", "{}", true},
		{"a write in a run that lost its lock", lostRun, "PUT", "/api/v1/namespaces/x/secrets/y", "{}", false},
		{"a dry run in a run that lost its lock", lostRun, "PATCH", "/api/v1/namespaces/x/secrets/y?dryRun=All", "{}", true},
	} {
		mu.Lock()
		got = nil
		mu.Unlock()
		req, err := http.NewRequestWithContext(tc.ctx, tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if resp != nil {
			resp.Body.Close()
		}
		var refused *WriteRefusedError
		mu.Lock()
		sent := len(got) == 1
		mu.Unlock()
		switch {
		case sent != tc.sent:
			t.Errorf("%s: sent %v, want %v", tc.name, sent, tc.sent)
		case !tc.sent && !errors.As(err, &refused):
			t.Errorf("%s: %v, want a *WriteRefusedError", tc.name, err)
		case tc.ctx == lostRun && !tc.sent && !errors.Is(err, lost):
			t.Errorf("%s: %v, want the lock's error", tc.name, err)
		case tc.sent && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
