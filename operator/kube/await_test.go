package kube_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness/fixture"
)

// TestAwait: a wait on the watcher's caches ends when an object it waits for appears; with
// ctx's error when ctx ends first; and, when the apiserver stops answering, with that
// error long before ctx ends.
func TestAwait(t *testing.T) {
	c := cluster.Get(t)
	var down atomic.Bool
	cfg := rest.CopyConfig(c.Config)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if down.Load() {
				return nil, errors.New("dial tcp: connect: connection refused")
			}
			return next.RoundTrip(r)
		})
	})
	client, err := kube.NewClientForConfig(cfg, ownership.KubeOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	ns := c.Namespace(t)
	cm := fixture.Object(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: awaited, namespace: %s}\n", ns))
	w := client.NewWatcher()
	defer w.Stop()
	looks := 0
	exists := func() (bool, error) {
		looks++
		live, err := w.Get(context.Background(), cm, "")
		return live != nil, err
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		time.Sleep(200 * time.Millisecond)
		if _, err := client.Apply(ctx, cm, kube.ApplyOptions{}); err != nil {
			t.Error(err)
		}
	}()
	if err := w.Await(ctx, exists); err != nil || ctx.Err() != nil {
		t.Fatalf("waiting for the ConfigMap to appear: %v (ctx: %v)", err, ctx.Err())
	}
	if looks < 2 {
		t.Errorf("Await looked %d times: once before the ConfigMap existed, once after", looks)
	}

	short, cancelShort := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancelShort()
	never := func() (bool, error) { return false, nil }
	if err := w.Await(short, never); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a wait whose ctx ends: %v, want ctx's error", err)
	}

	down.Store(true)
	long, cancelLong := context.WithTimeout(context.Background(), time.Minute)
	defer cancelLong()
	err = w.Await(long, never)
	if err == nil || long.Err() != nil {
		t.Errorf("a wait on a cluster that stopped answering: %v (ctx: %v), want the cluster's error before ctx ends", err, long.Err())
	}
}
