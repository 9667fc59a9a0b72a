package cluster

import (
	"os"
	"strings"
	"sync"
	"testing"
)

// EnvTier names the tier of the suite a run is: "test" (make test: unit tests and the tests
// on the shared cluster), "e2e" (make e2e: the multi-cluster bed and clusters of a test's
// own), "unit" (a go test by hand of what needs no cluster at all) or empty (a go test by
// hand: every test). A test says what it needs by what it asks
// this package for (Get, GetBed, StartPrivate, StartPrivateBed); the tier a test runs in
// follows from that alone, so hack/test.sh keeps no list of names.
const EnvTier = "ISTIOCTL_TEST_TIER"

// Tiers.
const (
	TierTest = "test"
	TierE2E  = "e2e"
	TierUnit = "unit"
)

// need is what a test asked for.
type need int

const (
	needShared need = iota + 1
	needBed
	needPrivate
)

func (n need) String() string {
	switch n {
	case needShared:
		return "the shared cluster"
	case needBed:
		return "the multi-cluster bed"
	default:
		return "a cluster of its own"
	}
}

var (
	needsMu sync.Mutex
	// needs holds what each top-level test asked for so far: its subtests ask as it.
	needs = map[string]map[need]bool{}
)

// topLevel is the name of the top-level test t belongs to.
func topLevel(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return name
}

// declare records that t needs n and skips it when this run's tier is not the one for
// it: make test runs what needs no more than the shared cluster, make e2e what needs the
// bed or a cluster of its own (and the shared cluster only next to those). A test that asks
// for the shared cluster first and for more later fails: its first part would run in one
// tier and the rest in none, so it must ask for the larger need first.
func declare(t testing.TB, n need) {
	t.Helper()
	tier := os.Getenv(EnvTier)
	top := topLevel(t)
	needsMu.Lock()
	had := needs[top]
	if had == nil {
		had = map[need]bool{}
		needs[top] = had
	}
	had[n] = true
	large, shared := had[needBed] || had[needPrivate], had[needShared]
	needsMu.Unlock()
	switch tier {
	case "":
	case TierTest:
		if n == needShared {
			return
		}
		if shared {
			t.Fatalf("%s asks for %s after the shared cluster: ask for it first (cluster.%s), so that the whole test runs in make e2e", top, n, askFor(n))
		}
		t.Skipf("needs %s: runs in make e2e", n)
	case TierE2E:
		if n == needShared && !large {
			t.Skip("needs the shared cluster only: runs in make test")
		}
	case TierUnit:
		t.Skipf("needs %s: runs in make test or make e2e", n)
	default:
		t.Fatalf("%s=%q: want %q, %q, %q or empty", EnvTier, tier, TierTest, TierE2E, TierUnit)
	}
}

func askFor(n need) string {
	if n == needBed {
		return "GetBed"
	}
	return "StartPrivate"
}
