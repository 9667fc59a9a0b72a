package cmd

import (
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/version"
)

// SpecFlags are the flags that pick an install spec, shared by every command that resolves
// one (install, manifest generate, profile dump, verify-install, ...).
type SpecFlags struct {
	Files     []string
	Sets      []string
	Manifests string
	Force     bool
}

// addWithRevision registers the spec flags and --revision of a command that renders the
// spec (install, manifest generate and translate).
func (f *SpecFlags) addWithRevision(fs *pflag.FlagSet, revision *string) {
	f.add(fs)
	fs.StringVarP(revision, "revision", "r", "", "Control plane revision (the same as --set revision=R)")
}

// add registers -f, --set, --manifests and --force.
func (f *SpecFlags) add(fs *pflag.FlagSet) {
	fs.StringSliceVarP(&f.Files, "filename", "f", nil, "IstioOperator spec files, overlaid left to right; - reads standard input (last only)")
	setFlag(fs, &f.Sets, "Override a spec field: path=value, relative to spec (e.g. profile=demo, values.global.logging.level=debug); repeatable")
	fs.StringVarP(&f.Manifests, "manifests", "d", "", "Directory with charts/ and profiles/ to use instead of the built-in ones")
	fs.BoolVar(&f.Force, "force", false, "Proceed even when the spec has validation errors (they are shown as warnings)")
}

// setFlag adds --set, whose values must parse as path=value: a malformed one is a bad
// command line, refused as the flags are parsed.
func setFlag(fs *pflag.FlagSet, p *[]string, usage string) {
	fs.VarP(&setValues{p}, "set", "s", usage)
}

// setValues is --set's value: a string array of parsed path=value.
type setValues struct{ p *[]string }

func (s *setValues) Set(v string) error {
	if _, err := spec.ParseSetFlag(v); err != nil {
		return err
	}
	*s.p = append(*s.p, v)
	return nil
}

func (s *setValues) Type() string { return "stringArray" }

func (s *setValues) String() string {
	if s.p == nil || len(*s.p) == 0 {
		return "[]"
	}
	return "[" + strings.Join(*s.p, ",") + "]"
}

// options turns the flags (and --revision, as an alias) into resolution options.
func (f *SpecFlags) options(stdin io.Reader, revision string) spec.Options {
	return spec.Options{Files: f.Files, Stdin: stdin, Sets: f.Sets, ManifestsDir: f.Manifests, Force: f.Force, Revision: revision, Version: version.Version}
}
