package cmd_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// The lock's lease duration is capped at 60 s wherever it comes from: above it, the flag,
// ISTIOCTL_LOCK_LEASE_DURATION and the config file are refused as a bad command line (exit
// code 64), naming where the value came from and the limit; up to it they are taken.
func TestLockLeaseDurationCap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		env    string // ISTIOCTL_LOCK_LEASE_DURATION
		config string // the config file's
		want   []string
	}{
		{name: "flag above the cap", args: []string{"--lock-lease-duration", "2h"},
			want: []string{`"--lock-lease-duration"`, "2h0m0s is above the limit of 60s"}},
		{name: "flag just above the cap", args: []string{"--lock-lease-duration=61s"},
			want: []string{`"--lock-lease-duration"`, "1m1s is above the limit of 60s"}},
		{name: "variable above the cap", env: "2h",
			want: []string{"ISTIOCTL_LOCK_LEASE_DURATION", "2h0m0s is above the limit of 60s"}},
		{name: "config file above the cap", config: "lock-lease-duration: 24h\n",
			want: []string{"lock-lease-duration (from ISTIOCTL_LOCK_LEASE_DURATION or ", "config.yaml", "24h0m0s is above the limit of 60s"}},
		{name: "flag at the cap", args: []string{"--lock-lease-duration", "60s"}},
		{name: "variable at the cap", env: "1m"},
		{name: "the flag wins over the variable", args: []string{"--lock-lease-duration", "30s"}, env: "2h"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("ISTIOCTL_CONFIG", "")
			t.Setenv("ISTIOCTL_LOCK_LEASE_DURATION", tc.env)
			if tc.env == "" {
				os.Unsetenv("ISTIOCTL_LOCK_LEASE_DURATION")
			}
			if tc.config != "" {
				dir := filepath.Join(home, ".istioctl")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(tc.config), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := harness.Run(t, append(tc.args, "version", "--remote=false", "--short")...)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var usage *cmd.UsageError
			if !errors.As(err, &usage) {
				t.Fatalf("%v, want a usage error (exit code 64)", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
