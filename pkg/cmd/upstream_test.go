package cmd_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestUpstreamFlags: every flag upstream's --help lists (testdata/upstream-flags.txt, from
// hack/upstream-flags.sh) is accepted by ours with its shorthand, and either keeps
// upstream's meaning or is a row of docs/upstream.md's "CLI differences" whose text is
// the warning ours prints when it is used; every such warning is a row.
func TestUpstreamFlags(t *testing.T) {
	root := cmd.NewRootCommand(cmd.Streams{})
	differs := cliDifferences(t)
	b, err := os.ReadFile("../../testdata/upstream-flags.txt")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		words := strings.Fields(line)
		i := 0
		for i < len(words) && !strings.HasPrefix(words[i], "-") && !strings.HasPrefix(words[i], "@") {
			i++
		}
		path, rest := strings.Join(words[:i], " "), words[i:] // a line names a flag or alias
		c := root
		if path != "global" {
			if c, _, err = root.Find(words[:i]); err != nil || !(c.Name() == words[i-1] || c.HasAlias(words[i-1])) {
				t.Errorf("%s: no such command (%v)", path, err)
				continue
			}
		}
		if alias, ok := strings.CutPrefix(rest[0], "@"); ok {
			if !c.HasAlias(alias) {
				t.Errorf("%s: ours is not also called %s", path, alias)
			}
			continue
		}
		name := strings.TrimPrefix(rest[0], "--")
		c.InheritedFlags() // merges the command's and its parents' persistent flags into Flags
		fl := c.Flags().Lookup(name)
		if fl == nil {
			t.Errorf("%s: ours has no --%s", path, name)
			continue
		}
		key := path + " --" + name
		if len(rest) > 1 && "-"+fl.Shorthand != rest[1] {
			if differs[path+" "+rest[1]] == "" {
				t.Errorf("%s --%s: shorthand -%s, upstream's %s", path, name, fl.Shorthand, rest[1])
			}
			seen[path+" "+rest[1]] = true
		}
		seen[key] = true
		if want, got := differs[key], strings.Join(fl.Annotations[cmd.DiffersAnnotation], ""); want != got {
			t.Errorf("%s --%s: warns %q, docs/upstream.md says %q", path, name, got, want)
		}
	}
	for key := range differs {
		if !seen[key] {
			t.Errorf("docs/upstream.md's CLI differences list %s, which upstream does not have", key)
		}
	}
}

var differenceRow = regexp.MustCompile("(?m)^\\| `([a-z -]+) (--?[a-zA-Z-]+)` \\| (.+) \\|$")

// cliDifferences are the rows of docs/upstream.md's CLI differences: "command --flag"
// to what ours does instead.
func cliDifferences(t *testing.T) map[string]string {
	b, err := os.ReadFile("../../docs/upstream.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "\n## CLI differences\n")
	section, _, _ = strings.Cut(section, "\n## ")
	out := map[string]string{}
	for _, m := range differenceRow.FindAllStringSubmatch(section, -1) {
		out[m[1]+" "+m[2]] = m[3]
	}
	if len(out) == 0 {
		t.Error("docs/upstream.md has no CLI differences rows")
	}
	return out
}

// unreachable is a kubeconfig whose cluster refuses every connection at once.
const unreachable = "../../testdata/kubeconfig-unreachable.yaml"

// TestUpstreamMeanings: upstream's flags and names do what upstream's do (those the
// cluster tests cannot show offline: --verify in install_verify_e2e_test.go), and each CLI
// difference prints its warning on stderr.
func TestUpstreamMeanings(t *testing.T) {
	x := harness.Istioctl{T: t, Kubeconfig: unreachable}
	type run struct {
		args      []string
		code      int    // -1: any
		want, not string // in stderr or the error, and not
	}
	cases := []run{
		{[]string{"apply", "-y", "--set", "profile=minimal"}, 1, "cannot reach the cluster", ""},
		{[]string{"uninstall", "--set", "values.bogus=1", "-y"}, 1, "spec.values.bogus: unknown field", "cannot reach"},
		{[]string{"uninstall", "--set", "values.bogus=1", "-y", "--force"}, 1, "unknown field (ignored because of --force)", ""},
		{[]string{"manifest", "generate", "--set", "profile=empty", "--dry-run"}, 0, "", "warning"},
	}
	for key, instead := range cliDifferences(t) {
		if words := strings.Fields(key); strings.HasPrefix(words[len(words)-1], "--") {
			flag := words[len(words)-1]
			cases = append(cases, run{append(words[:len(words)-1], flag+"=true", "--set", "profile=empty"), -1, "! warning: " + flag + ": " + instead + "\n", ""})
		}
	}
	for _, tc := range cases {
		r := x.Run(tc.args...)
		got := r.Stderr + r.ErrorLine()
		if (tc.code >= 0 && r.Code != tc.code) || !strings.Contains(got, tc.want) || (tc.not != "" && strings.Contains(got, tc.not)) {
			t.Errorf("istioctl %s: exit %d, want %d; want %q, not %q in:\n%s", strings.Join(tc.args, " "), r.Code, tc.code, tc.want, tc.not, got)
		}
	}
}

// TestNoLibraryLogLines: on an unreachable cluster no output holds a source position
// (client-go's klog lines, which go to the process's stderr), unless --vklog asks for them.
func TestNoLibraryLogLines(t *testing.T) {
	stderr := os.Stderr
	t.Cleanup(func() { os.Stderr = stderr })
	for _, args := range []string{"history", "tag list", "verify-install", "x precheck", "install -y", "version --vklog=6"} {
		f, _ := os.CreateTemp(t.TempDir(), "stderr") // nil fails the run below
		os.Stderr = f
		r := harness.Istioctl{T: t, Kubeconfig: unreachable}.Run(strings.Fields(args)...)
		os.Stderr = stderr
		direct, _ := os.ReadFile(f.Name())
		if got := r.Stdout + r.Stderr + r.ErrorLine() + string(direct); strings.Contains(got, ".go:") != strings.Contains(args, "--vklog") {
			t.Errorf("istioctl %s: a source position only with --vklog:\n%s", args, got)
		}
	}
}

// TestUsageExitCodes: every command of the tree exits 64 (docs/exit-codes.md), before it
// reaches for the cluster, on an extra argument, an unknown flag, a bad flag value and
// (where it has --set) a --set without =; a misspelt command is suggested its name, as
// cobra does; profile diff exits 64 on a name that is no profile, 1 on a difference. Each
// command has its own short description, its help links the docs (no bare docs/ path), and
// only the offline ones leave the connection flags out.
func TestUsageExitCodes(t *testing.T) {
	bareDocs, offline := regexp.MustCompile(`(^|[^/])docs/`), regexp.MustCompile(`^istioctl (profile|manifest translate|completion|help|experimental fleet dump)\b`)
	x := harness.Istioctl{T: t, Kubeconfig: unreachable}
	shorts := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		path := strings.Fields(c.CommandPath())[1:]
		if other := shorts[c.Short]; other != "" && c.CommandPath() != "istioctl manifest install" {
			t.Errorf("%s has the short description of %s", c.CommandPath(), other)
		}
		shorts[c.Short] = c.CommandPath()
		if usage := c.UsageString(); bareDocs.MatchString(c.Long+c.Example+usage) || offline.MatchString(c.CommandPath()) == strings.Contains(usage, "--context") {
			t.Errorf("%s: a bare docs/ path, or connection flags listed %v (offline %v):\n%s%s", c.CommandPath(), strings.Contains(usage, "--context"), offline.MatchString(c.CommandPath()), c.Long, usage)
		}
		bad := [][]string{{"--no-such-flag"}, {"--kubeclient-timeout", "soon"}, {"a", "b", "c", "d"}}
		if c.Flags().Lookup("set") != nil {
			bad = append(bad, []string{"--set", "profile"})
		}
		for _, b := range bad {
			if r := x.Run(append(append([]string{}, path...), b...)...); r.Code != 64 {
				t.Errorf("istioctl %s %s: exit %d, want 64\n%s%s", strings.Join(path, " "), strings.Join(b, " "), r.Code, r.Stderr, r.ErrorLine())
			}
		}
	}
	walk(cmd.NewRootCommand(cmd.Streams{}))
	for _, tc := range []struct {
		args string
		code int
		want string
	}{
		{"x prechek", 64, "Did you mean this?\n\tprecheck\n"},
		{"profile diff default nope", 64, `profile "nope" not found`},
		{"profile diff default demo", 1, "+++ demo"},
	} {
		if r := x.Run(strings.Fields(tc.args)...); r.Code != tc.code || !strings.Contains(r.Stdout+r.ErrorLine(), tc.want) {
			t.Errorf("istioctl %s: exit %d, want %d and %q:\n%s%s", tc.args, r.Code, tc.code, tc.want, r.Stdout, r.ErrorLine())
		}
	}
}
