package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/istioctl-installer/istioctl/operator/action"
)

// lockFlags are the cluster lock's flags of every command that writes.
type lockFlags struct {
	Timeout time.Duration
	Skip    bool
}

func (f *lockFlags) add(fs *pflag.FlagSet) {
	fs.DurationVar(&f.Timeout, "lock-timeout", action.DefaultLockTimeout, "How long to wait while another istioctl holds the cluster lock (0: fail at once, exit code 3)")
	fs.BoolVar(&f.Skip, "skip-lock", false, "Write without taking the cluster lock (when you may not use Leases in kube-system): "+
		"not safe while another istioctl writes to the cluster")
}

// lockPeriods are the hidden flags that shorten the lock's fixed lease periods (tests; also
// ISTIOCTL_LOCK_LEASE_DURATION, ...).
type lockPeriods struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

func (p *lockPeriods) addFlags(fs *pflag.FlagSet) {
	fs.Var((*leaseDuration)(&p.LeaseDuration), "lock-lease-duration", fmt.Sprintf("Cluster lock lease duration (default 15s, at most %ds)", int(action.MaxLockLeaseDuration/time.Second)))
	fs.DurationVar(&p.RenewDeadline, "lock-renew-deadline", 0, "Cluster lock renew deadline (default 10s)")
	fs.DurationVar(&p.RetryPeriod, "lock-retry-period", 0, "Cluster lock retry period (default 2s)")
	for _, f := range []string{"lock-lease-duration", "lock-renew-deadline", "lock-retry-period"} {
		_ = fs.MarkHidden(f)
	}
}

// leaseDuration is --lock-lease-duration's value: a duration the lock accepts
// (action.CheckLockLeaseDuration), refused as a usage error whether it comes from the command
// line or from ISTIOCTL_LOCK_LEASE_DURATION and the config file (applyConfig).
type leaseDuration time.Duration

func (d *leaseDuration) String() string { return time.Duration(*d).String() }
func (d *leaseDuration) Type() string   { return "duration" }

func (d *leaseDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if err := action.CheckLockLeaseDuration(v); err != nil {
		return &UsageError{Err: err}
	}
	*d = leaseDuration(v)
	return nil
}

// writerConfig is Config for a command that writes: with how it takes the cluster lock.
func (g *Globals) writerConfig(errOut io.Writer, command string, f lockFlags) *action.Config {
	cfg := g.Config(errOut)
	cfg.Lock = &action.LockOptions{Timeout: f.Timeout, Skip: f.Skip, Command: command,
		LeaseDuration: g.lockPeriods.LeaseDuration, RenewDeadline: g.lockPeriods.RenewDeadline, RetryPeriod: g.lockPeriods.RetryPeriod}
	return cfg
}
