package cmd_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestOutputFormatsDeclared: every -o that picks a format declares its formats once (the
// flag's annotation, read by its help, its check and completion), offers yaml wherever it
// offers json, names its default, and its help lists them; manifest generate's and
// translate's -o is a path.
func TestOutputFormatsDeclared(t *testing.T) {
	root := cmd.NewRootCommand(cmd.Streams{})
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		f := c.LocalFlags().Lookup("output")
		if f == nil {
			return
		}
		formats := f.Annotations["istioctl/formats"]
		if strings.HasPrefix(c.CommandPath(), "istioctl manifest generate") || strings.HasPrefix(c.CommandPath(), "istioctl manifest translate") {
			if formats != nil {
				t.Errorf("%s: -o is a path, yet declares formats %v", c.CommandPath(), formats)
			}
			return
		}
		checked++
		switch {
		case len(formats) == 0:
			t.Errorf("%s: -o declares no formats (use outputFlag)", c.CommandPath())
		case f.DefValue != formats[0]:
			t.Errorf("%s: -o defaults to %q, not its first format %q", c.CommandPath(), f.DefValue, formats[0])
		case slices.Contains(formats, "json") && !slices.Contains(formats, "yaml"):
			t.Errorf("%s: -o offers json but not yaml: %v", c.CommandPath(), formats)
		}
		for _, name := range formats {
			if !strings.Contains(f.Usage, name) {
				t.Errorf("%s: -o's help %q does not name %s", c.CommandPath(), f.Usage, name)
			}
		}
	}
	walk(root)
	if checked < 15 {
		t.Errorf("checked only %d commands with -o", checked)
	}
}

// TestEmptyOutputIsTheDefault: -o "" prints what no -o prints, as upstream's version takes
// it; an unknown format is still refused before the command runs.
func TestEmptyOutputIsTheDefault(t *testing.T) {
	run := func(args ...string) (string, error) {
		r := harness.Istioctl{T: t}.Run(args...)
		return r.Stdout + r.Stderr, r.Err
	}
	for _, args := range [][]string{{"version", "--remote=false"}, {"profile", "list"}} {
		want, err := run(args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, want)
		}
		got, err := run(append(args, "-o", "")...)
		if err != nil || got != want {
			t.Errorf("%v -o \"\": %v\n%s\nwant\n%s", args, err, got, want)
		}
		if _, err := run(append(args, "-o", "xml")...); err == nil || !strings.Contains(err.Error(), `--output "xml" is not supported`) {
			t.Errorf("%v -o xml: %v, want refused", args, err)
		}
	}
}
