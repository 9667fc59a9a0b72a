package action

import (
	"context"

	"github.com/istioctl-installer/istioctl/operator/kube"
	"github.com/istioctl-installer/istioctl/operator/kubeflags"
	"github.com/istioctl-installer/istioctl/operator/ownership"
)

// DefaultIstioNamespace is the istio namespace when nothing names another (the -i default).
const DefaultIstioNamespace = ownership.DefaultNamespace

// Config is what the actions of one command share: how to reach the cluster, the istio
// namespace the command was given, where warnings go, and this istioctl's version. It is
// configuration only: what a call learns or holds (its client, the cluster lock) lives in
// the call's run.
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
	// Version is this istioctl's version, as the command layer was built with it: the
	// version label of what an install applies, its install records, the cluster lock's
	// holder, the reader objects of a link.
	Version string
	// AllowedRegistries, when not empty, are the only registries the images a spec renders
	// or injects may come from: rendering one with another image is refused, naming each
	// image and the field that sets it, before anything is written (--allowed-registries).
	AllowedRegistries []string
	// NewClient, when set, replaces building the client from Kube (tests; a fleet's
	// cluster, reached once).
	NewClient func() (*kube.Client, error)
}

// newClient builds a client of the cluster; it does not contact it. The client refuses
// any write made outside a run of the plan-then-write protocol (kube.Client.GuardWrites).
func (c *Config) newClient() (*kube.Client, error) {
	var client *kube.Client
	var err error
	if c.NewClient != nil {
		client, err = c.NewClient()
	} else {
		f := c.Kube
		if f == nil {
			f = &kubeflags.Flags{Timeout: kubeflags.DefaultTimeout}
		}
		client, err = kube.NewClient(f)
	}
	if err != nil {
		return nil, err
	}
	// Who istioctl applies as is ownership's rule, given to kube here (a hook's client too).
	client.Configure(ownership.KubeOptions()...)
	client.GuardWrites()
	return client, nil
}

// connect builds a client and checks that the cluster answers, so that an unreachable
// cluster is one clear error before anything else is asked of it.
func (c *Config) connect(ctx context.Context) (*kube.Client, error) {
	client, err := c.newClient()
	if err != nil {
		return nil, err
	}
	if _, err := client.ServerVersion(ctx); err != nil {
		return nil, err
	}
	return client, nil
}

// reached is a copy of c whose client is client, already reached (a fleet's cluster).
func (c *Config) reached(client *kube.Client) *Config {
	out := *c
	out.NewClient = func() (*kube.Client, error) { return client, nil }
	return &out
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
