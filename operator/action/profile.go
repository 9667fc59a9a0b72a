package action

import (
	"context"
	"errors"
	"slices"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// ProfileList lists the available profiles.
type ProfileList struct {
	*Config
	ManifestsDir string
}

// Run returns the profile names, sorted.
func (a *ProfileList) Run(context.Context) ([]string, error) {
	profs, err := spec.NewProfiles(a.ManifestsDir)
	if err != nil {
		return nil, err
	}
	return profs.Names()
}

// ProfileDump resolves a spec and dumps it.
type ProfileDump struct {
	*Config
	Spec spec.Options
	// Profile, when set, is the profile to dump (a --set profile= still wins).
	Profile    string
	ConfigPath string
}

// SpecDump is a resolved spec, or its part at a config path, and the --set flags that
// rebuild it.
type SpecDump struct {
	Spec  any
	Flags []string
}

// Run returns the dump.
func (a *ProfileDump) Run(context.Context) (*SpecDump, error) {
	opts := a.Spec
	if a.Profile != "" {
		opts.Sets = append([]string{"profile=" + a.Profile}, opts.Sets...)
	}
	res, err := a.resolve(opts)
	if err != nil {
		return nil, err
	}
	node, err := spec.Select(res.Tree, a.ConfigPath)
	if err != nil {
		return nil, err
	}
	return &SpecDump{Spec: node, Flags: spec.SetFlags(node, a.ConfigPath)}, nil
}

// ProfileDiff compares two resolved profiles.
type ProfileDiff struct {
	*Config
	A, B         string
	ManifestsDir string
}

// Run returns the unified diff of the two resolved profiles, "" when they are the same.
func (a *ProfileDiff) Run(context.Context) (string, error) {
	dump := func(name string) (string, error) {
		res, err := spec.Resolve(spec.Options{Sets: []string{"profile=" + name}, ManifestsDir: a.ManifestsDir})
		var probs v1alpha1.Problems
		if errors.As(err, &probs) && slices.ContainsFunc(probs, func(p v1alpha1.Problem) bool { return p.Path == "spec.profile" }) {
			// A profile named on the command line that is not one.
			return "", &UsageError{Err: err}
		}
		if err != nil {
			return "", err
		}
		b, err := spec.YAML(res.Tree)
		return string(b), err
	}
	left, err := dump(a.A)
	if err != nil {
		return "", err
	}
	right, err := dump(a.B)
	if err != nil {
		return "", err
	}
	if left == right {
		return "", nil
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(left), B: difflib.SplitLines(right),
		FromFile: a.A, ToFile: a.B, Context: 3,
	})
}
