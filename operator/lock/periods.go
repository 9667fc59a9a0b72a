package lock

import (
	"fmt"
	"time"
)

// The fixed periods, client-go's defaults for the control plane's own leases: a holder's
// lease lasts LeaseDuration after its last renewal (as a waiter sees it); a holder renews
// every RetryPeriod and gives up (stops writing) when it could not for RenewDeadline;
// waiters retry every RetryPeriod (with client-go's jitter: up to 2.2 times it).
const (
	LeaseDuration = 15 * time.Second
	RenewDeadline = 10 * time.Second
	RetryPeriod   = 2 * time.Second
)

// MaxLeaseDuration caps the lease duration: a writer may not ask for a longer one, and a
// waiter honours at most this much of whatever a holder wrote, so that a writer that dies
// holding the lock (a CI job killed mid-run) blocks the others for a minute at most.
const MaxLeaseDuration = 60 * time.Second

// CheckLeaseDuration refuses a lease duration above MaxLeaseDuration, naming the limit.
func CheckLeaseDuration(d time.Duration) error {
	if d > MaxLeaseDuration {
		return fmt.Errorf("lock lease duration %s is above the limit of %ds: a writer that dies holding the lock would block every other for that long",
			d, int(MaxLeaseDuration/time.Second))
	}
	return nil
}

// Honoured is how long a waiter lets a lease of duration d go unrenewed before it takes
// it over: d, at most MaxLeaseDuration (whatever the holder wrote).
func Honoured(d time.Duration) time.Duration { return min(d, MaxLeaseDuration) }

// Periods are the lease timings; a zero field takes the fixed value above (tests shorten them).
type Periods struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

func (p Periods) withDefaults() Periods {
	if p.LeaseDuration == 0 {
		p.LeaseDuration = LeaseDuration
	}
	if p.RenewDeadline == 0 {
		p.RenewDeadline = RenewDeadline
	}
	if p.RetryPeriod == 0 {
		p.RetryPeriod = RetryPeriod
	}
	return p
}

// Validate applies client-go's rules (lease > renew deadline > 1.2 × retry period > 0),
// the Lease's (its duration is whole seconds) and the cap (MaxLeaseDuration).
func (p Periods) Validate() error {
	p = p.withDefaults()
	if err := CheckLeaseDuration(p.LeaseDuration); err != nil {
		return err
	}
	switch {
	case p.LeaseDuration%time.Second != 0:
		return fmt.Errorf("lock lease duration %s: must be whole seconds", p.LeaseDuration)
	case p.LeaseDuration <= p.RenewDeadline:
		return fmt.Errorf("lock lease duration %s must be longer than the renew deadline %s", p.LeaseDuration, p.RenewDeadline)
	case p.RetryPeriod <= 0 || p.RenewDeadline <= time.Duration(1.2*float64(p.RetryPeriod)):
		return fmt.Errorf("lock renew deadline %s must be longer than 1.2 times the retry period %s", p.RenewDeadline, p.RetryPeriod)
	}
	return nil
}

// RequestTimeout bounds each of the lock's requests: the client's timeout, but at most half
// the renew deadline (at least a second), so that one hung request cannot cost the lease,
// as client-go advises.
func (p Periods) RequestTimeout(client time.Duration) time.Duration {
	t := max(time.Second, p.withDefaults().RenewDeadline/2)
	if client > 0 && client < t {
		return client
	}
	return t
}
