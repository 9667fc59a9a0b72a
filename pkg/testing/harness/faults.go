package harness

import (
	"os"
	"strconv"
	"testing"
)

// The fault tests' knobs: how many faults a test injects, and the seed of where they land.
const (
	EnvFaultRuns = "ISTIOCTL_FAULT_RUNS"
	EnvFaultSeed = "ISTIOCTL_FAULT_SEED"
)

// FaultRuns is how many faults a fault test injects: def, or ISTIOCTL_FAULT_RUNS.
func FaultRuns(t testing.TB, def int) int {
	t.Helper()
	v := os.Getenv(EnvFaultRuns)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", EnvFaultRuns, v)
	}
	return n
}

// FaultSeed is the seed of a fault test's random fault points: ISTIOCTL_FAULT_SEED, or the
// time. The test logs it, so a failing run can be repeated.
func FaultSeed(t testing.TB, now uint64) uint64 {
	t.Helper()
	v := os.Getenv(EnvFaultSeed)
	if v == "" {
		return now
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", EnvFaultSeed, v, err)
	}
	return n
}
