package skew

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/manifests"
)

// Change is a behaviour change a release made that compatibilityVersion gates: the
// values path it changed and the value that keeps the behaviour of before.
type Change struct {
	// Minor is the release that changed the behaviour ("1.30").
	Minor string `json:"minor"`
	// Path is the Helm values path ("pilot.env.PILOT_ENABLE_STRICT_GATEWAY_MERGING").
	Path string `json:"path"`
	// Old is the value that keeps the behaviour of before.
	Old any `json:"old"`
	// CompatibilityVersion is the compatibilityVersion that sets Old ("1.29").
	CompatibilityVersion string `json:"compatibilityVersion"`
}

// compatFile is where the charts keep the values of compatibilityVersion=<minor>; every
// chart carries the same copy (hack/sync-helm-profiles.sh), istiod's is read.
const compatFile = "charts/istio-control/istio-discovery/files/profile-compatibility-version-%s.json"

// ErrNoCompatibility says a minor is older than any compatibilityVersion the charts offer.
var ErrNoCompatibility = errors.New("the charts offer no compatibilityVersion for it")

// Changes lists, for every minor an upgrade from -> line enters, the behaviour changes
// compatibilityVersion gates, derived from the charts' compatibility profiles: the
// profile of minor m-1 restores what m changed, so a path it sets that m's profile does
// not set the same way changed in m. line is the charts' own version (this build's), whose
// minor has no profile of its own.
func Changes(from, line string) ([]Change, error) {
	crossed, err := Crossed(from, line)
	if err != nil {
		return nil, err
	}
	lineMinor := Minor(line)
	var out []Change
	for _, m := range crossed {
		before := prevMinor(m)
		old, err := compatValues(before)
		if err != nil {
			return out, fmt.Errorf("behaviour changed in %s: compatibilityVersion %s: %w", m, before, err)
		}
		now := map[string]any{}
		if m != lineMinor {
			if now, err = compatValues(m); err != nil {
				return out, fmt.Errorf("behaviour changed in %s: compatibilityVersion %s: %w", m, m, err)
			}
		}
		var paths []string
		for p := range old {
			if v, ok := now[p]; !ok || fmt.Sprint(v) != fmt.Sprint(old[p]) {
				paths = append(paths, p)
			}
		}
		sort.Strings(paths)
		for _, p := range paths {
			out = append(out, Change{Minor: m, Path: p, Old: old[p], CompatibilityVersion: before})
		}
	}
	return out, nil
}

func prevMinor(m string) string {
	p, _ := parse(m)
	return fmt.Sprintf("%d.%d", p.Major(), int(p.Minor())-1)
}

// compatValues reads compatibilityVersion=minor's values, flattened to paths.
func compatValues(minor string) (map[string]any, error) {
	data, err := fs.ReadFile(manifests.Charts, fmt.Sprintf(compatFile, minor))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoCompatibility
	}
	if err != nil {
		return nil, err
	}
	tree := map[string]any{}
	if err := yaml.Unmarshal(data, &tree); err != nil {
		return nil, fmt.Errorf("%s: %w", fmt.Sprintf(compatFile, minor), err)
	}
	out := map[string]any{}
	flatten("", tree, out)
	return out, nil
}

func flatten(prefix string, v any, out map[string]any) {
	m, ok := v.(map[string]any)
	if !ok {
		out[prefix] = v
		return
	}
	for k, sub := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		flatten(p, sub, out)
	}
}

// String is "pilot.env.X changed in 1.30 (compatibilityVersion: 1.29 keeps 'false')".
func (c Change) String() string {
	return fmt.Sprintf("%s changed in %s (compatibilityVersion: %s keeps %s)", c.Path, c.Minor, c.CompatibilityVersion, strings.TrimSpace(string(yamlOf(c.Old))))
}

func yamlOf(v any) []byte {
	b, err := yaml.Marshal(v)
	if err != nil {
		return []byte(fmt.Sprint(v))
	}
	return b
}
