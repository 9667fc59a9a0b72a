package action

import (
	"context"
	"sync"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kubeflags"
	"github.com/istioctl-installer/istioctl/operator/lock"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// DefaultIstioNamespace is the istio namespace when nothing names another (the -i default).
const DefaultIstioNamespace = ownership.DefaultNamespace

// Config is what the actions of one command share: how to reach the cluster, the istio
// namespace the command was given, and where warnings go.
type Config struct {
	// Kube are the connection flags.
	Kube *kubeflags.Flags
	// IstioNamespace is -i: where the control plane, its tags and install records are found
	// when no spec says otherwise.
	IstioNamespace string
	// Warn receives the spec's and the charts' warnings as they are found (a spec that
	// does not resolve still has its warnings said); nil drops them.
	Warn func(string)
	// Lock says how writers take the cluster lock; nil: wait up to DefaultLockTimeout.
	Lock *LockOptions

	once      sync.Once
	client    *kube.Client
	err       error
	mu        sync.Mutex
	connected bool
	// NewClient, when set, replaces building the client from Kube (tests).
	NewClient func() (*kube.Client, error)

	// held is the cluster lock while a run holds it; lockSkipped while one runs without.
	held        *lock.Held
	lockSkipped bool
}

// Client builds the cluster client once. It does not contact the cluster.
func (c *Config) Client() (*kube.Client, error) {
	c.once.Do(func() {
		if c.NewClient != nil {
			c.client, c.err = c.NewClient()
			return
		}
		f := c.Kube
		if f == nil {
			f = &kubeflags.Flags{Timeout: kubeflags.DefaultTimeout}
		}
		c.client, c.err = kube.NewClient(f)
	})
	return c.client, c.err
}

// connect builds the client and checks (once) that the cluster answers, so that an
// unreachable cluster is one clear error before anything else is asked of it.
func (c *Config) connect(ctx context.Context) (*kube.Client, error) {
	client, err := c.Client()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.connected {
		if _, err := client.ServerVersion(ctx); err != nil {
			return nil, err
		}
		c.connected = true
	}
	return client, nil
}

func (c *Config) warn(msg string) {
	if c != nil && c.Warn != nil {
		c.Warn(msg)
	}
}

// istioNamespace is -i, or the default.
func (c *Config) istioNamespace() string {
	if c.IstioNamespace != "" {
		return c.IstioNamespace
	}
	return DefaultIstioNamespace
}
