package cmd_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// completion is what one __complete request answered.
type completion struct {
	candidates []string // without cobra's tab-separated descriptions
	directive  cobra.ShellCompDirective
	stderr     string
}

// complete asks istioctl for the completions of the last of args, as a shell does.
func complete(t *testing.T, args ...string) completion {
	t.Helper()
	out, stderr, err := harness.Run(t, append([]string{cobra.ShellCompRequestCmd}, args...)...)
	if err != nil {
		t.Fatalf("__complete %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	last := lines[len(lines)-1]
	d, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
	if !strings.HasPrefix(last, ":") || err != nil {
		t.Fatalf("__complete %s: no directive line in %q", strings.Join(args, " "), out)
	}
	c := completion{directive: cobra.ShellCompDirective(d), stderr: stderr}
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		c.candidates = append(c.candidates, name)
	}
	return c
}

// quiet fails when a completion printed anything on stderr but cobra's directive line.
func (c completion) quiet(t *testing.T, what string) {
	t.Helper()
	if rest := strings.TrimSpace(c.stderr); !strings.HasPrefix(rest, "Completion ended with directive:") || strings.Count(rest, "\n") > 0 {
		t.Errorf("%s printed on stderr:\n%s", what, c.stderr)
	}
}

// offline gives the test no kubeconfig, so nothing can reach a cluster by accident.
func offline(t *testing.T) string {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", filepath.Join(home, "none"))
	return home
}

func TestCompletionOffline(t *testing.T) {
	home := offline(t)
	kubeconfig := filepath.Join(home, "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: east, cluster: {server: "https://127.0.0.1:1"}}, {name: west, cluster: {server: "https://127.0.0.1:2"}}]
users: [{name: admin, user: {token: x}}]
contexts: [{name: kind-east, context: {cluster: east, user: admin}}, {name: kind-west, context: {cluster: west, user: admin}}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	profiles := []string{"ambient", "default", "demo", "eastwest", "empty", "minimal", "openshift", "openshift-ambient", "preview", "remote", "stable"}
	for _, tc := range []struct {
		args    []string
		want    []string // exactly, in order
		has     []string // at least
		noSpace bool
	}{
		{args: []string{"install", "--set", "profile="}, want: prefixed("profile=", profiles)},
		{args: []string{"install", "--set", "profile=de"}, want: []string{"profile=default", "profile=demo"}},
		{args: []string{"install", "--set", "pro"}, want: []string{"profile="}, noSpace: true},
		{args: []string{"manifest", "generate", "--set", ""}, has: []string{"profile=", "revision=", "hub=", "tag=", "namespace=", "components.", "values.", "meshConfig."}, noSpace: true},
		{args: []string{"install", "--set", "values."}, has: []string{"values.global.", "values.pilot.", "values.gateways.", "values.cni.", "values.ztunnel.", "values.base."}, noSpace: true},
		{args: []string{"install", "--set", "values.global.logging."}, want: []string{"values.global.logging.level="}, noSpace: true},
		{args: []string{"install", "--set", "components.cni.enabled="}, want: []string{"components.cni.enabled=true", "components.cni.enabled=false"}},
		{args: []string{"install", "--set", "meshConfig.accessLogEncoding="}, want: []string{"meshConfig.accessLogEncoding=TEXT", "meshConfig.accessLogEncoding=JSON"}},
		{args: []string{"install", "--set", "nope."}},
		{args: []string{"profile", "dump", ""}, want: profiles},
		{args: []string{"profile", "diff", "default", "mi"}, want: []string{"minimal"}},
		{args: []string{"profile", "diff", "default", "demo", ""}},
		{args: []string{"--kubeconfig", kubeconfig, "--context", ""}, want: []string{"kind-east", "kind-west"}},
		{args: []string{"--kubeconfig", kubeconfig, "--context", "kind-w"}, want: []string{"kind-west"}},
		{args: []string{"--kubeconfig", kubeconfig, "install", "--cluster", ""}, want: []string{"east", "west"}},
		{args: []string{"--kubeconfig", kubeconfig, "install", "--user", ""}, want: []string{"admin"}},
		{args: []string{"--context", ""}}, // no kubeconfig: none, quietly
		{args: []string{"install", "-o", ""}, want: []string{"text", "json", "yaml"}, noSpace: true},
		{args: []string{"verify-install", "-o", ""}, want: []string{"text", "json", "yaml", "junit"}, noSpace: true},
		{args: []string{"tag", "list", "-o", ""}, want: []string{"table", "json", "yaml", "name", "jsonpath=", "custom-columns="}, noSpace: true},
		{args: []string{"history", "-o", ""}, want: []string{"table", "json", "yaml", "name", "jsonpath=", "custom-columns="}, noSpace: true},
		{args: []string{"history", "-o", "j"}, want: []string{"json", "jsonpath="}, noSpace: true},
	} {
		c := complete(t, tc.args...)
		what := strings.Join(tc.args, " ")
		if tc.want != nil || tc.has == nil {
			if !slices.Equal(c.candidates, tc.want) {
				t.Errorf("%s: %q, want %q", what, c.candidates, tc.want)
			}
		}
		for _, h := range tc.has {
			if !slices.Contains(c.candidates, h) {
				t.Errorf("%s: %q lacks %q", what, c.candidates, h)
			}
		}
		if got := c.directive&cobra.ShellCompDirectiveNoSpace != 0; got != tc.noSpace {
			t.Errorf("%s: no-space %v, want %v", what, got, tc.noSpace)
		}
		if c.directive&cobra.ShellCompDirectiveNoFileComp == 0 {
			t.Errorf("%s: offers files too (directive %d)", what, c.directive)
		}
		c.quiet(t, what)
	}

	// -f: spec files, by extension.
	for _, path := range [][]string{{"install", "-f", ""}, {"manifest", "generate", "-f", ""}, {"verify-install", "-f", ""}} {
		c := complete(t, path...)
		if c.directive != cobra.ShellCompDirectiveFilterFileExt || !slices.Equal(c.candidates, []string{"yaml", "yml", "json"}) {
			t.Errorf("%s: %q directive %d, want the yaml, yml and json files", strings.Join(path, " "), c.candidates, c.directive)
		}
	}
	// manifest generate -o is a path.
	if c := complete(t, "manifest", "generate", "-o", ""); len(c.candidates) != 0 || c.directive != cobra.ShellCompDirectiveDefault {
		t.Errorf("manifest generate -o: %q directive %d, want files", c.candidates, c.directive)
	}
}

func prefixed(p string, names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, p+n)
	}
	return out
}

// TestOutputCompletion: every command with -o offers exactly what it accepts: each offered
// format passes the command's check (it fails later, for want of a cluster, or succeeds
// offline), and a format it does not offer is a usage error.
func TestOutputCompletion(t *testing.T) {
	offline(t)
	root := cmd.NewRootCommand(cmd.Streams{})
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.LocalFlags().Lookup("output") != nil {
			paths = append(paths, path)
		}
		for _, sub := range c.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(root, nil)
	if len(paths) < 10 {
		t.Fatalf("found only %v with -o", paths)
	}
	offered := map[string][]string{}
	universe := []string{"bogus"} // every format some command offers
	for _, path := range paths {
		what := strings.Join(path, " ")
		c := complete(t, append(slices.Clone(path), "-o", "")...)
		if what == "manifest generate" || what == "manifest translate" {
			continue // a path
		}
		if len(c.candidates) == 0 {
			t.Errorf("%s -o offers nothing: add it to pkg/cmd/completion.go's outputFormats", what)
		}
		offered[what] = c.candidates
		for _, f := range c.candidates {
			if !slices.Contains(universe, f) {
				universe = append(universe, f)
			}
		}
	}
	for _, path := range paths {
		what := strings.Join(path, " ")
		if what == "manifest generate" || what == "manifest translate" {
			continue
		}
		for _, f := range universe {
			want := !slices.Contains(offered[what], f) // not offered: a usage error
			switch f {
			case "jsonpath=":
				f += "{.items}"
			case "custom-columns=":
				f += "A:.a"
			}
			args := append(slices.Clone(path), "-o", f)
			root := cmd.NewRootCommand(cmd.Streams{})
			sub, _, _ := root.Find(path)
			if sub.Flags().Lookup("skip-confirmation") != nil {
				args = append(args, "-y")
			}
			if what == "uninstall" {
				args = append(args, "--purge")
			}
			if path[0] == "experimental" && path[1] == "fleet" {
				args = append(args, "-f", "../../docs/examples/fleet-3-clusters.yaml")
			}
			if what == "experimental images mirror" {
				args = append(args, "--to", "127.0.0.1:1/mesh", "--dry-run") // a registry that refuses at once
			}
			_, _, err := harness.Run(t, args...)
			var usage *cmd.UsageError
			if isUsage := errors.As(err, &usage); isUsage != want {
				t.Errorf("%s -o %s: %v (usage error %v; offered %q)", what, f, err, isUsage, offered[what])
			}
		}
	}
}
