package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/istioctl-installer/istioctl/operator/kubeflags"
)

// DefaultTimeout bounds each request to the apiserver unless --kubeclient-timeout says otherwise.
const DefaultTimeout = kubeflags.DefaultTimeout

// Client bundles everything the engine needs to talk to one cluster.
type Client struct {
	Config  *rest.Config
	Dynamic dynamic.Interface
	// Metadata reads objects without their bodies (names, labels, annotations, managed
	// fields): what an install needs to know before it applies.
	Metadata  metadata.Interface
	Discovery discovery.CachedDiscoveryInterface
	Mapper    meta.RESTMapper
	// Host is the apiserver URL, for error messages.
	Host string

	guard *writeGuard
	// fieldManager and controllerFields are who Apply writes as (FieldManager,
	// ControllerFields).
	fieldManager     string
	controllerFields []ControllerField
}

// NewClient builds a Client from the connection flags. It does not contact the cluster.
func NewClient(f *kubeflags.Flags, opts ...Option) (*Client, error) {
	cfg, err := f.RESTConfig()
	if err != nil {
		return nil, err
	}
	return NewClientForConfig(cfg, opts...)
}

// NewClientForConfig builds a Client from a rest.Config.
func NewClientForConfig(cfg *rest.Config, opts ...Option) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	// Deprecation warnings from the apiserver, once each, as plain lines (not klog's).
	cfg.WarningHandler = rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true})
	// istioctl is one short-lived process issuing bursts of requests, with its own bound
	// on concurrent ones; the apiserver's priority and fairness protects the server.
	// client-go's defaults (5 QPS), or kubectl's 50, would throttle an install of many
	// gateways for no benefit (and make client-go print "Waited before sending request").
	if cfg.QPS == 0 {
		cfg.QPS = 1000
		cfg.Burst = 1000
	}
	// The engine's clients go through the write guard (GuardWrites, WithWritePermit); Config
	// does not.
	guard := &writeGuard{}
	plain := cfg
	cfg = rest.CopyConfig(plain)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return guarded{next: rt, guard: guard} })
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the discovery client: %w", err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the metadata client: %w", err)
	}
	cached := memory.NewMemCacheClient(disc)
	c := &Client{
		Config: plain, Dynamic: dc, Metadata: mc, Discovery: cached,
		Mapper: restmapper.NewDeferredDiscoveryRESTMapper(cached),
		Host:   cfg.Host, guard: guard,
	}
	c.Configure(opts...)
	return c, nil
}

// ServerVersion asks the apiserver for its version; the error says what to check when the
// cluster cannot be reached.
func (c *Client) ServerVersion(ctx context.Context) (*version.Info, error) {
	var info version.Info
	body, err := c.Discovery.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, c.ExplainError(err)
	}
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("reading the server version from %s: %w", c.Host, err)
	}
	return &info, nil
}

// ExplainError adds the cluster address and a hint to errors that mean the cluster is not
// usable from here (unreachable, refused, timed out, unauthenticated, forbidden).
func (c *Client) ExplainError(err error) error {
	if err == nil {
		return nil
	}
	if r, ok := refused(err); ok {
		return r // nothing was sent: the guard's reason is the whole story
	}
	var urlErr *url.Error
	var netErr net.Error
	switch {
	case strings.Contains(err.Error(), "getting credentials: "):
		// The kubeconfig's exec credential plugin failed: the cluster was never asked.
		return fmt.Errorf("could not get credentials for the cluster at %s from the kubeconfig's credential plugin: %w; install or log in to that plugin, or pick another --context", c.Host, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the cluster at %s rejected our credentials (expired or missing?): %w; refresh them or pick another --context", c.Host, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("permission denied by the cluster at %s: %w", c.Host, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot reach the cluster at %s: connection refused; is it running, and are --kubeconfig/--context right?: %w", c.Host, err)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return fmt.Errorf("cannot reach the cluster at %s: timed out (see --kubeclient-timeout and --request-timeout); is it running, and are --kubeconfig/--context right?: %w", c.Host, err)
	case errors.As(err, &urlErr):
		return fmt.Errorf("cannot reach the cluster at %s: %w; check --kubeconfig and --context", c.Host, err)
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("cannot reach the cluster at %s: %w", c.Host, err)
	}
	return err
}
