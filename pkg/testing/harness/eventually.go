package harness

import (
	"fmt"
	"testing"
	"time"
)

// Interval is how often Eventually asks.
const Interval = 200 * time.Millisecond

// Eventually asks cond every Interval until it holds, failing the test after timeout with
// what and cond's last reason.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	if err := Within(timeout, Interval, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Within asks cond every interval until it holds and returns nil, or an error with its last
// reason after timeout: Eventually for a goroutine other than the test's, or a poller that
// must ask more often.
func Within(timeout, interval time.Duration, cond func() (bool, string)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not so after %v: %s", timeout, why)
		}
		time.Sleep(interval)
	}
}
