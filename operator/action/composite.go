package action

import (
	"context"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kube"
)

// What an operation made of other operations' runs (a fleet's, operator/action/fleetrun) needs of
// this package: the protocol for the whole, a connection per cluster, a write under a
// cluster's lock.

// composite is the plan of an operation made of runs: the protocol's view of P.
type composite[P comparable] struct {
	planned
	p P
}

// Composite carries out an operation made of other operations' runs by the protocol: its
// plan (plan, when p is zero), carried out by carry, then its done event (done words it;
// the protocol adds its exit code). It takes no lock of its own: each run inside takes its
// cluster's.
func Composite[P comparable, R any](ctx context.Context, c *Config, events event.Sink, p P,
	plan func(context.Context) (P, error), carry func(context.Context, P) (R, error), done func(R, error) event.Event) (R, error) {
	var given *composite[P] // nil: the protocol plans first
	var zero P
	if p != zero {
		given = &composite[P]{p: p}
	}
	steps := protocol[*composite[P], R]{
		plan: func(ctx context.Context, _ *run) (*composite[P], error) {
			p, err := plan(ctx)
			if err != nil {
				return nil, err
			}
			return &composite[P]{p: p}, nil
		},
		carryOut: func(ctx context.Context, _ *run, cp *composite[P]) (R, error) { return carry(ctx, cp.p) },
		done:     func(_ *composite[P], res R, err error) event.Event { return done(res, err) },
	}
	return steps.execute(ctx, c.begin(nil, events, false), given, false)
}

// Connect is a client of the cluster c names, once it answered.
func (c *Config) Connect(ctx context.Context) (*kube.Client, error) { return c.connect(ctx) }

// Reached is c going through client, a cluster that answered, for every action made of it.
func (c *Config) Reached(client *kube.Client) *Config { return c.reached(client) }

// Say hands msg to c's Warn.
func (c *Config) Say(msg string) { c.warn(msg) }

// WriteLocked runs fn as a run of the protocol with nothing to plan or report (a link
// Secret, cacerts): under the cluster lock of client's cluster, taken for action in
// namespace.
func (c *Config) WriteLocked(ctx context.Context, client *kube.Client, action, namespace string, fn func(context.Context) error) error {
	return c.write(ctx, client, event.Discard{}, lockRun{action: action, namespace: namespace}, fn)
}
